//! POSIX-style regular expression matching for `~` / `~*` (psql's `\d` patterns), via regex-lite.

use crate::error::SqlError;

pub fn matches(pattern: &str, text: &str, case_insensitive: bool) -> Result<bool, SqlError> {
    let re = regex_lite::RegexBuilder::new(pattern)
        .case_insensitive(case_insensitive)
        .build()
        .map_err(|e| SqlError::InvalidParameter {
            message: format!("invalid regular expression: {e}"),
        })?;
    Ok(re.is_match(text))
}
