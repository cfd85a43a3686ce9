//! A note store an author might write with rmcp 3.11.0's macros: three tools, `add_note`, `get_note` and
//! `search_notes`, with structured output. It is mcp-wirefuzz's test of a server author's own bugs: [`Bug`] plants
//! one (the binary reads it from `NOTES_BUG`); [`Notes::default`] is the clean server.

use rmcp::{
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{Implementation, ServerCapabilities, ServerConfig},
    tool, tool_handler, tool_router, ErrorData, Json, ServerHandler,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

/// One bug of the author's own, planted in one tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bug {
    /// `get_note` indexes the store without a bounds check: a panic for an id not stored.
    Panic,
    /// `search_notes` never returns for a query with no words.
    Hang,
    /// `get_note` of a note stored with an empty body reports `average_word_length` as NaN (JSON `null`),
    /// against its outputSchema's `"type": "number"`: reached only after an `add_note`.
    SchemaAfterWrite,
    /// `add_note` answers a JSON-RPC error for a title longer than 8 characters, which its schema accepts.
    ErrorForValidArgs,
    /// `search_notes` prints a debug line on stdout (the protocol's channel) for a query with no words.
    StdoutPrint,
}

impl Bug {
    /// The bug `NOTES_BUG` names (`panic`, `hang`, `schema-after-write`, `error-valid-args`, `stdout-print`);
    /// `None` when it is unset or empty; an unknown name is an error.
    pub fn from_env() -> Result<Option<Bug>, String> {
        match std::env::var("NOTES_BUG").unwrap_or_default().as_str() {
            "" => Ok(None),
            "panic" => Ok(Some(Bug::Panic)),
            "hang" => Ok(Some(Bug::Hang)),
            "schema-after-write" => Ok(Some(Bug::SchemaAfterWrite)),
            "error-valid-args" => Ok(Some(Bug::ErrorForValidArgs)),
            "stdout-print" => Ok(Some(Bug::StdoutPrint)),
            other => Err(format!("NOTES_BUG={other}: not a planted bug")),
        }
    }
}

/// `add_note`'s arguments.
#[derive(Deserialize, JsonSchema)]
pub struct AddNote {
    /// The note's title.
    pub title: String,
    /// The note's text.
    pub body: String,
}

/// `get_note`'s arguments.
#[derive(Deserialize, JsonSchema)]
pub struct GetNote {
    /// An id `add_note` returned.
    pub id: u64,
}

/// `search_notes`'s arguments.
#[derive(Deserialize, JsonSchema)]
pub struct Search {
    /// Words to look for; the first one counts.
    pub query: String,
}

/// What `add_note` returns.
#[derive(Serialize, JsonSchema)]
pub struct NoteRef {
    /// The new note's id.
    pub id: u64,
    /// Its title.
    pub title: String,
}

/// What `get_note` returns.
#[derive(Serialize, JsonSchema)]
pub struct Note {
    /// The note's id.
    pub id: u64,
    /// Its title.
    pub title: String,
    /// Its text.
    pub body: String,
    /// How many words the text has.
    pub words: u64,
    /// The mean length of its words.
    pub average_word_length: f64,
}

/// What `search_notes` returns.
#[derive(Serialize, JsonSchema)]
pub struct Hits {
    /// The ids of the notes that match.
    pub ids: Vec<u64>,
    /// The word searched for.
    pub first_word: String,
}

/// The server: a note store shared by its clones (rmcp clones the handler), with one bug planted or none.
#[derive(Clone)]
pub struct Notes {
    notes: Arc<Mutex<Vec<(String, String)>>>,
    bug: Option<Bug>,
    tool_router: ToolRouter<Self>,
}

impl Default for Notes {
    /// The clean server with an empty store.
    fn default() -> Notes {
        Notes::with_bug(None)
    }
}

#[tool_router]
impl Notes {
    /// A server with an empty store and `bug` planted.
    pub fn with_bug(bug: Option<Bug>) -> Notes {
        Notes { notes: Arc::default(), bug, tool_router: Notes::tool_router() }
    }

    /// Store a note; returns its id.
    #[tool]
    async fn add_note(&self, Parameters(args): Parameters<AddNote>) -> Result<Json<NoteRef>, ErrorData> {
        if self.bug == Some(Bug::ErrorForValidArgs) && args.title.chars().count() > 8 {
            return Err(ErrorData::invalid_params("title too long", None));
        }
        let mut notes = self.notes.lock().unwrap();
        notes.push((args.title.clone(), args.body));
        Ok(Json(NoteRef { id: notes.len() as u64, title: args.title }))
    }

    /// A stored note by id.
    #[tool]
    async fn get_note(&self, Parameters(GetNote { id }): Parameters<GetNote>) -> Result<Json<Note>, String> {
        let notes = self.notes.lock().unwrap();
        let (title, body) = if self.bug == Some(Bug::Panic) {
            notes[id.wrapping_sub(1) as usize].clone()
        } else {
            let index = id.checked_sub(1).filter(|i| (*i as usize) < notes.len());
            // A note not stored is the tool's error (isError), not the protocol's.
            let index = index.ok_or_else(|| format!("no note {id}"))?;
            notes[index as usize].clone()
        };
        let words: Vec<&str> = body.split_whitespace().collect();
        let letters: usize = words.iter().map(|w| w.chars().count()).sum();
        let average = if words.is_empty() && self.bug != Some(Bug::SchemaAfterWrite) {
            0.0
        } else {
            letters as f64 / words.len() as f64
        };
        let words = words.len() as u64;
        Ok(Json(Note { id, title, body, words, average_word_length: average }))
    }

    /// The ids of the notes whose title or body holds the query's first word.
    #[tool]
    async fn search_notes(&self, Parameters(Search { query }): Parameters<Search>) -> Result<Json<Hits>, ErrorData> {
        let first = query.split_whitespace().next().unwrap_or_default().to_string();
        if first.is_empty() {
            match self.bug {
                Some(Bug::Hang) => std::future::pending::<()>().await,
                Some(Bug::StdoutPrint) => println!("debug: empty query {query:?}"),
                _ => {}
            }
        }
        let notes = self.notes.lock().unwrap();
        let hits = notes.iter().enumerate().filter(|(_, (t, b))| !first.is_empty() && (t.contains(&first) || b.contains(&first)));
        let ids = hits.map(|(i, _)| i as u64 + 1).collect();
        Ok(Json(Hits { ids, first_word: first }))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().build();
        ServerConfig::new(capabilities).with_server_info(Implementation::new("notes", "0.3.0"))
    }
}
