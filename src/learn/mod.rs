//! Learning what a server is before judging it: the stage between a target and the runs that use it. Each learner
//! runs conversations on a [`Target`](crate::server::Target) and fills a data type that holds no learning of its own:
//! [`contact`] tells a server that answers nothing at once, [`stalls`] gives up on one that keeps stalling,
//! [`probe`] the server model ([`crate::model::ServerModel`]: eras, versions, name), [`surface`] the surface
//! ([`crate::surface::Surface`]: tools, prompts, resources, templates), and [`planted`] the policy a planted bug is
//! judged under (the built-in model and the surface learned from the planted server); [`in_process`] fills both into
//! the policy of a user's in-process server, as the harness entry points judge it. [`stage`] runs them all for a
//! server a run starts (`mcp-wirefuzz fuzz`'s learning, and the pieces the other subcommands use): the first
//! contact, the fork server a Python program runs through, the model, the surface and the SDK.

pub mod contact;
pub mod in_process;
pub mod planted;
pub mod probe;
pub mod stage;
pub mod stalls;
pub mod surface;
