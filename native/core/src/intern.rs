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

/// Interned Java values by id: `(repr, class_name)`.
#[derive(Clone, Debug, Default)]
pub struct LiteralTable {
    literals: HashMap<i64, (String, String)>,
}

impl LiteralTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, id: i64, repr: impl Into<String>, class_name: impl Into<String>) {
        self.literals.insert(id, (repr.into(), class_name.into()));
    }

    /// `(repr, class_name)` of a literal id.
    pub fn get(&self, id: i64) -> Option<(&str, &str)> {
        self.literals
            .get(&id)
            .map(|(r, c)| (r.as_str(), c.as_str()))
    }
}
