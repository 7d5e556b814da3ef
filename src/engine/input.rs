//! The checks of a batch's documents before anything is parsed (ids: [`super::check_id`]).
use crate::error::{InputError, Result};
use crate::text::Language;
use crate::types::*;

/// Checks a document's tags and metadata against [`MAX_TAGS`], [`MAX_TAG_CHARS`] and
/// [`MAX_META_CHARS`].
///
/// Errors: [`InputError::InvalidOption`] naming the document and the field.
pub(super) fn check_tags(d: &DocumentInput) -> Result<()> {
    let bad = |field: &str, reason: String| -> Result<()> {
        Err(InputError::InvalidOption { name: format!("documents[{:?}].{field}", d.id), reason }.into())
    };
    if d.tags.len() > MAX_TAGS {
        return bad("tags", format!("{} tags; at most {MAX_TAGS}", d.tags.len()));
    }
    for t in &d.tags {
        let n = normalize_tag(t).chars().count();
        if n == 0 || n > MAX_TAG_CHARS {
            return bad("tags", format!("{t:?} is not 1..={MAX_TAG_CHARS} characters"));
        }
    }
    if d.meta.len() > MAX_TAGS {
        return bad("meta", format!("{} entries; at most {MAX_TAGS}", d.meta.len()));
    }
    for (k, v) in &d.meta {
        if k.is_empty() || k.chars().count() > MAX_META_CHARS || v.chars().count() > MAX_META_CHARS {
            return bad("meta", format!("{k:?}: names are 1..={MAX_META_CHARS} characters, values up to {MAX_META_CHARS}"));
        }
    }
    Ok(())
}

/// Checks a document's language: a BCP 47 tag whose primary subtag is 2 to 8 letters, and, for a
/// language with a Snowball stemmer, one this build can stem in ([`Language::available`]: in the
/// page, its stemmer module loaded), so that no document is stored half stemmed.
///
/// Errors: [`InputError::InvalidOption`] naming the document for a tag that is not one;
/// [`InputError::StemmerUnavailable`].
pub(super) fn check_lang(d: &DocumentInput) -> Result<()> {
    let Some(tag) = d.lang.as_deref() else { return Ok(()) };
    if primary_subtag(tag).is_none() {
        let reason =
            format!("{:?} is not a language tag (a primary subtag of 2 to 8 letters: en, fr-CA)", tag.chars().take(40).collect::<String>());
        return Err(InputError::InvalidOption { name: format!("documents[{:?}].lang", d.id), reason }.into());
    }
    match Language::from_tag(tag) {
        Some(lang) if !lang.available() => Err(InputError::StemmerUnavailable { lang: lang.tag() }.into()),
        _ => Ok(()),
    }
}
