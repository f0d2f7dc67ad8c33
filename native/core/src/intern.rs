//! The tables of values Java interns so that a call's facts hold only numbers: map keys and
//! names ([`StringTable`]), Java values ([`LiteralTable`]).

use std::collections::HashMap;

/// Interned strings (map keys) by id, shared with the Java side.
#[derive(Clone, Debug, Default)]
pub struct StringTable {
    strings: HashMap<i64, String>,
}

impl StringTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, id: i64, s: impl Into<String>) {
        self.strings.insert(id, s.into());
    }

    pub fn get(&self, id: i64) -> Option<&str> {
        self.strings.get(&id).map(String::as_str)
    }
}

/// Interned Java values by id: the short text explanations show (`repr`), the class, and the
/// whole text a signature profile records, when a profile can restore the value.
#[derive(Clone, Debug, Default)]
pub struct LiteralTable {
    literals: HashMap<i64, LiteralEntry>,
}

#[derive(Clone, Debug)]
struct LiteralEntry {
    repr: String,
    class_name: String,
    profile_value: Option<String>,
}

impl LiteralTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers literal `id`; `profile_value` is `None` for a value no profile can restore.
    pub fn insert(&mut self, id: i64, repr: impl Into<String>, class_name: impl Into<String>, profile_value: Option<String>) {
        self.literals.insert(id, LiteralEntry { repr: repr.into(), class_name: class_name.into(), profile_value });
    }

    /// `(repr, class_name)` of a literal id.
    pub fn get(&self, id: i64) -> Option<(&str, &str)> {
        self.literals
            .get(&id)
            .map(|e| (e.repr.as_str(), e.class_name.as_str()))
    }

    /// The whole text of literal `id` for a signature profile, if a profile can restore it.
    pub fn profile_value(&self, id: i64) -> Option<&str> {
        self.literals.get(&id)?.profile_value.as_deref()
    }
}
