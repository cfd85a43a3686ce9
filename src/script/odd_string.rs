//! Strings of unusual classes (empty, control characters, separators, surrogate pairs, 70,000 characters), put
//! where a name, a URI template or a tool argument goes.

/// A string of an unusual class.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, arbitrary::Arbitrary, proptest_derive::Arbitrary,
)]
pub enum OddString {
    /// Empty.
    #[default]
    Empty,
    /// Surrounded by whitespace.
    Whitespace,
    /// U+2028 and U+2029, the line and paragraph separators JavaScript once refused in strings.
    Separators,
    /// Control characters.
    Control,
    /// Quotes, backslashes and escapes.
    Escapes,
    /// Characters beyond the Basic Multilingual Plane (surrogate pairs in UTF-16).
    NonBmp,
    /// 70,000 characters: a reply echoing it is beyond the 64 KiB pipe buffer.
    Huge,
}

impl OddString {
    /// Every class.
    pub const ALL: [OddString; 7] = [
        OddString::Empty,
        OddString::Whitespace,
        OddString::Separators,
        OddString::Control,
        OddString::Escapes,
        OddString::NonBmp,
        OddString::Huge,
    ];

    /// A stable kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            OddString::Empty => "empty",
            OddString::Whitespace => "whitespace",
            OddString::Separators => "separators",
            OddString::Control => "control",
            OddString::Escapes => "escapes",
            OddString::NonBmp => "non-bmp",
            OddString::Huge => "huge",
        }
    }

    /// The string.
    pub fn text(self) -> String {
        match self {
            OddString::Empty => String::new(),
            OddString::Whitespace => " \t wirefuzz \n ".into(),
            OddString::Separators => "a\u{2028}b\u{2029}c".into(),
            OddString::Control => "\u{0}\u{1}\u{1b}[0m\u{7f}".into(),
            OddString::Escapes => "\"\\/\u{8}\u{c}\\u0000'".into(),
            OddString::NonBmp => "\u{1F600}\u{10FFFF}\u{1D11E}".into(),
            OddString::Huge => "w".repeat(70_000),
        }
    }
}
