//! A map that can take back everything done to it since its last checkpoint, at the cost of
//! what was done: an operation that cannot be imported leaves no model, enum or name behind,
//! without a copy of every map before every operation (which made importing quadratic in the
//! document).

use std::ops::Deref;

use indexmap::IndexMap;

/// An insertion-ordered map from names, with an undo log.
#[derive(Debug, Clone)]
pub(super) struct Journaled<V> {
    map: IndexMap<String, V>,
    undo: Vec<Undo<V>>,
}

#[derive(Debug, Clone)]
enum Undo<V> {
    /// The key was new: take it out again.
    Remove(String),
    /// The key held this value at this position: put it back.
    Restore(usize, String, V),
}

impl<V: Clone> Default for Journaled<V> {
    fn default() -> Self {
        Journaled { map: IndexMap::new(), undo: Vec::new() }
    }
}

impl<V: Clone> Journaled<V> {
    /// Sets `key` (in place when it is there, last when it is new).
    pub(super) fn insert(&mut self, key: String, value: V) {
        match self.map.get_full(&key) {
            Some((i, _, old)) => self.undo.push(Undo::Restore(i, key.clone(), old.clone())),
            None => self.undo.push(Undo::Remove(key.clone())),
        }
        self.map.insert(key, value);
    }

    /// Takes `key` out, keeping the others' order.
    pub(super) fn remove(&mut self, key: &str) {
        if let Some((i, k, v)) = self.map.shift_remove_full(key) {
            self.undo.push(Undo::Restore(i, k, v));
        }
    }

    /// The value of `key`, to change.
    pub(super) fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        let (i, k, v) = self.map.get_full(key)?;
        self.undo.push(Undo::Restore(i, k.clone(), v.clone()));
        self.map.get_mut(key)
    }

    /// What is there now stays: the log starts again.
    pub(super) fn checkpoint(&mut self) {
        self.undo.clear();
    }

    /// Back to the last checkpoint.
    pub(super) fn rollback(&mut self) {
        while let Some(undo) = self.undo.pop() {
            match undo {
                Undo::Remove(key) => {
                    self.map.shift_remove(&key);
                }
                Undo::Restore(i, key, value) => {
                    if let Some(slot) = self.map.get_mut(&key) {
                        *slot = value;
                    } else {
                        self.map.shift_insert(i, key, value);
                    }
                }
            }
        }
    }

    /// The map itself.
    pub(super) fn into_inner(self) -> IndexMap<String, V> {
        self.map
    }
}

impl<V> Deref for Journaled<V> {
    type Target = IndexMap<String, V>;
    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rollback_restores_values_order_and_absence() {
        let mut m: Journaled<i32> = Journaled::default();
        m.insert("a".into(), 1);
        m.insert("b".into(), 2);
        m.insert("c".into(), 3);
        m.checkpoint();
        m.insert("b".into(), 20);
        m.remove("a");
        m.insert("d".into(), 4);
        *m.get_mut("c").unwrap() = 30;
        m.remove("c");
        m.insert("a".into(), 10);
        assert_eq!(m.iter().map(|(k, v)| format!("{k}{v}")).collect::<Vec<_>>(), ["b20", "d4", "a10"]);
        m.rollback();
        assert_eq!(m.iter().map(|(k, v)| format!("{k}{v}")).collect::<Vec<_>>(), ["a1", "b2", "c3"]);
        m.insert("e".into(), 5);
        m.checkpoint();
        m.rollback();
        assert_eq!(m.len(), 4);
    }
}
