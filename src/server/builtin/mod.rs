//! The servers that ship with the harness: the reference server, its planted bugs, and the quirky server that does
//! everything legal but odd.

pub mod fixtures;
pub mod http;
pub mod mutants;
pub mod quirks;
pub mod reference;
pub mod surface;
