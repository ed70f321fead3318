use super::*;

#[test]
fn like_patterns() {
    let m = |s: &str, p: &str| like_match(s, p, false).unwrap_or(false);
    assert!(m("rds_x", "rds%"));
    assert!(!m("xrds", "rds%"));
    assert!(m("abc", "a_c"));
    assert!(m("a%c", "a\\%c"));
    assert!(!m("abc", "a\\%c"));
    assert!(m("", "%"));
    assert!(!m("", "_"));
    assert!(m("ab", "%%b%"));
    assert!(m("aXbXc", "a%c"));
    assert!(!m("aXbXd", "a%c"));
    assert!(m("abcabd", "%abd"));
    // Multi-byte characters count as one for `_`, backtracking steps over whole ones.
    assert!(m("é", "_"));
    assert!(m("xéyébz", "%é_z"));
    assert!(!m("xéyéz", "%é_z"));
    assert!(m("€10", "\\€%"));
    assert_eq!(like_match("ÉCOLE", "%cole", true), Ok(true));
    assert_eq!(like_match("ÉCOLE", "%cole", false), Ok(false));
    assert!(like_match("ab", "a\\", false).is_err());
    assert_eq!(like_escape("a#_b\\", "#"), Ok("a\\_b\\\\".to_string()));
    assert_eq!(like_escape("a##b", "#"), Ok("a\\#b".to_string()));
    assert_eq!(like_escape("a\\b", ""), Ok("a\\\\b".to_string()));
    assert!(like_escape("a", "ab").is_err());
}

/// LIKE by its definition, recursively over characters: the reference for the fast one.
fn like_reference(s: &[char], p: &[char]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some(('%', rest)) => (0..=s.len()).any(|i| like_reference(&s[i..], rest)),
        Some(('_', rest)) => !s.is_empty() && like_reference(&s[1..], rest),
        Some(('\\', [e, rest @ ..])) => s.first() == Some(e) && like_reference(&s[1..], rest),
        // A pattern ending in the escape character matches nothing here (PostgreSQL
        // rejects it with 22025).
        Some(('\\', [])) => false,
        Some((c, rest)) => s.first() == Some(c) && like_reference(&s[1..], rest),
    }
}

proptest::proptest! {
    #[test]
    fn like_agrees_with_its_definition(
        s in "[abé%_\\\\]{0,8}",
        p in "[abé%_\\\\]{0,6}",
    ) {
        let sc: Vec<char> = s.chars().collect();
        let pc: Vec<char> = p.chars().collect();
        proptest::prop_assert_eq!(like_match(&s, &p, false).unwrap_or(false), like_reference(&sc, &pc), "{:?} LIKE {:?}", s, p);
    }
}

proptest::proptest! {
    /// A key set answers like a hash set of the same keys, below and above the size where
    /// it switches from comparing in place to hashing.
    #[test]
    fn key_sets_answer_like_hash_sets(
        inserted in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..3), 0..24),
        asked in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..3), 0..24),
    ) {
        let set: KeySet = inserted.iter().cloned().collect();
        let reference: HashSet<Vec<u8>> = inserted.iter().cloned().collect();
        proptest::prop_assert_eq!(set.len(), reference.len());
        for k in inserted.iter().chain(&asked) {
            proptest::prop_assert_eq!(set.contains(k), reference.contains(k), "{:?}", k);
        }
    }
}

proptest::proptest! {
    /// Compacting in place keeps the same values as picking them into a new row (NULL for
    /// a kept column past a short row's end).
    #[test]
    fn compacting_in_place_picks_the_kept_columns(
        len in 0usize..12,
        mask in proptest::collection::vec(proptest::prelude::any::<bool>(), 0..14),
    ) {
        let row: Vec<Value> = (0..len as i64).map(Value::Int).collect();
        let keep: Vec<usize> = (0..mask.len()).filter(|i| mask[*i]).collect();
        let picked: Vec<Value> = keep
            .iter()
            .map(|&i| row.get(i).cloned().unwrap_or(Value::Null))
            .collect();
        let mut compacted = row.clone();
        compact_in_place(&mut compacted, &keep);
        proptest::prop_assert_eq!(compacted, picked);
    }
}

proptest::proptest! {
    /// A catalog probe meets exactly the keys of the value it stands for.
    #[test]
    fn probes_key_as_their_values(oid in proptest::prelude::any::<u32>(), name in "(\\PC|\u{0})*") {
        use crate::pgcatalog::Probe;
        let key = |p: Probe<'_>| {
            let mut k = Vec::new();
            push_probe_key(&mut k, p).then_some(k)
        };
        let int = Value::Int(i64::from(oid));
        proptest::prop_assert_eq!(key(Probe::Oid(oid)), Some(value_key(std::slice::from_ref(&int))));
        let text = Value::text(format!("_{name}"));
        proptest::prop_assert_eq!(key(Probe::Name("_", &name)), Some(value_key(std::slice::from_ref(&text))));
        proptest::prop_assert_eq!(key(Probe::Value(&text)), Some(value_key(std::slice::from_ref(&text))));
        proptest::prop_assert_eq!(key(Probe::Value(&Value::Null)), None);
    }
}
