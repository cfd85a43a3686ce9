//! The baseline of accepted divergences (`diff --baseline FILE`): one entry per line, `CLASS METHOD [AT]`, then
//! optionally `# reason`. `METHOD` and `AT` are glob patterns as `--ignore` takes them (`*` within a step, `**`
//! across); `*` for the method accepts the class on every method, and an entry without `AT` accepts every place.
//! Blank lines and lines starting with `#` are comments.
//!
//! ```text
//! result tools/list result.tools[].inputSchema.**   # the SDKs write schemas differently
//! error-code tools/call*                             # v2 answers -32602 where v1 answered an isError result
//! ```

use super::Found;
use super::compare::{Class, Divergence, glob};
use anyhow::{Context, Result, bail};
use std::path::Path;

/// One accepted divergence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The class.
    pub class: Class,
    /// The method, as a pattern.
    pub method: String,
    /// The place, as a pattern (`None`: every place).
    pub at: Option<String>,
    /// Why it is accepted.
    pub reason: String,
}

impl Entry {
    /// True when this entry accepts `divergence`.
    pub fn covers(&self, divergence: &Divergence) -> bool {
        self.class == divergence.class
            && glob(self.method.as_bytes(), divergence.method.as_bytes())
            && self.at.as_ref().is_none_or(|at| glob(at.as_bytes(), divergence.at.as_bytes()))
    }

    /// The entry as written: `CLASS METHOD [AT]`.
    pub fn line(&self) -> String {
        match &self.at {
            Some(at) => format!("{} {} {at}", self.class, self.method),
            None => format!("{} {}", self.class, self.method),
        }
    }
}

/// Every accepted divergence.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Accepted {
    /// The entries, in file order.
    pub entries: Vec<Entry>,
}

impl Accepted {
    /// Parses a baseline; errors name the line.
    pub fn parse(text: &str) -> Result<Accepted> {
        let mut entries = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let (entry, reason) = line.split_once('#').unwrap_or((line, ""));
            let words: Vec<&str> = entry.split_whitespace().collect();
            let (class, method, at) = match words.as_slice() {
                [] => continue,
                [class, method] => (class, method, None),
                [class, method, at @ ..] => (class, method, Some(at.join(" "))),
                [class] => bail!("line {}: `{class}` needs a method (`*` for every method)", index + 1),
            };
            let Some(class) = Class::from_id(class) else {
                let known: Vec<&str> = Class::ALL.iter().map(|c| c.id()).collect();
                bail!("line {}: unknown divergence class `{class}` (one of {})", index + 1, known.join(", "));
            };
            entries.push(Entry { class, method: method.to_string(), at, reason: reason.trim().to_string() });
        }
        Ok(Accepted { entries })
    }

    /// Reads a baseline file.
    pub fn load(path: &Path) -> Result<Accepted> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        Accepted::parse(&text).with_context(|| format!("{}", path.display()))
    }

    /// The reason of the first entry that accepts `divergence` (empty when the entry gives none).
    pub fn reason(&self, divergence: &Divergence) -> Option<&str> {
        self.entries.iter().find(|entry| entry.covers(divergence)).map(|entry| entry.reason.as_str())
    }

    /// The entries that accept nothing found (as written).
    pub fn stale(&self, found: &[Found]) -> Vec<String> {
        let stale = self.entries.iter().filter(|entry| !found.iter().any(|f| entry.covers(&f.divergence)));
        stale.map(Entry::line).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn divergence(class: Class, method: &str, at: &str) -> Divergence {
        Divergence { class, method: method.into(), at: at.into(), a: String::new(), b: String::new() }
    }

    #[test]
    fn an_entry_accepts_its_class_method_and_place_only() {
        let accepted = Accepted::parse(
            "# accepted\nresult tools/list result.tools[].inputSchema.**  # schemas differ\nerror-code *\n",
        )
        .unwrap();
        let schema = divergence(Class::Result, "tools/list", "result.tools[].inputSchema.properties.a.type");
        assert_eq!(accepted.reason(&schema), Some("schemas differ"));
        assert_eq!(accepted.reason(&divergence(Class::Result, "tools/list", "result.tools.length")), None);
        assert_eq!(accepted.reason(&divergence(Class::Result, "prompts/list", "result.tools[].inputSchema.x")), None);
        assert_eq!(accepted.reason(&divergence(Class::ErrorCode, "tools/call add", "error.code")), Some(""));
        assert_eq!(accepted.reason(&divergence(Class::ResultVsError, "tools/call add", "result vs error")), None);
        let floats = Accepted::parse("answer-vs-silence * reply (a number*  # ids like 6.0\n").unwrap();
        let float = divergence(Class::AnswerVsSilence, "ping", "reply (a number with a fraction or exponent)");
        assert_eq!(floats.reason(&float), Some("ids like 6.0"));
        assert_eq!(floats.reason(&divergence(Class::AnswerVsSilence, "ping", "reply")), None);
    }

    #[test]
    fn a_bad_line_is_refused_with_its_number() {
        let error = Accepted::parse("result tools/list\nnot-a-class x\n").unwrap_err().to_string();
        assert!(error.contains("line 2") && error.contains("not-a-class"), "{error}");
        assert!(Accepted::parse("result\n").unwrap_err().to_string().contains("needs a method"));
    }
}
