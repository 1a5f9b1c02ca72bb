//! `paging.next` given as a page number: the results location of that page, and the page
//! number of a location.

use alloc::string::String;

use crate::api::decimal;

/// A `paging.next` that is a page number (`"2"`, also from a JSON number) → that number.
pub(super) fn page_number(next: &str) -> Option<u64> {
    // Spaces or tabs around the number; `trim`'s Unicode whitespace is a table in every page
    // for a padding no API sends.
    let next = next.trim_ascii();
    match next.bytes().all(|b| b.is_ascii_digit()) {
        true => next.parse().ok(),
        false => None,
    }
}

/// The `page` query parameter of `location` (path + query), when it is a number.
pub(super) fn page_of(location: &str) -> Option<u64> {
    let (_, query) = location.split_once('?')?;
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix("page="))
        .and_then(page_number)
}

/// `location` with its `page` query parameter set to `n` (replaced in place, or appended).
pub(super) fn with_page(location: &str, n: u64) -> String {
    let (path, query) = location.split_once('?').unwrap_or((location, ""));
    let mut pairs: alloc::vec::Vec<String> = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(String::from)
        .collect();
    let page = ["page=", &decimal(n)].concat();
    match pairs
        .iter_mut()
        .find(|p| *p == "page" || p.starts_with("page="))
    {
        Some(pair) => *pair = page,
        None => pairs.push(page),
    }
    [path, "?", &pairs.join("&")].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_numbers_are_plain_decimal() {
        assert_eq!(page_number("2"), Some(2));
        assert_eq!(page_number(" 0 "), Some(0));
        for bad in [
            "",
            "-1",
            "2.0",
            "/v3?page=2",
            "two",
            "99999999999999999999999",
        ] {
            assert_eq!(page_number(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_page_parameter_is_replaced_in_place_or_appended() {
        let r = "/v3/jobs/j/results";
        assert_eq!(with_page(r, 2), "/v3/jobs/j/results?page=2");
        assert_eq!(with_page(&format!("{r}?page=1"), 2), format!("{r}?page=2"));
        assert_eq!(
            with_page(&format!("{r}?a=1&page=7&b=2"), 8),
            format!("{r}?a=1&page=8&b=2")
        );
        assert_eq!(with_page(&format!("{r}?a=1"), 3), format!("{r}?a=1&page=3"));
        assert_eq!(page_of(&format!("{r}?a=1&page=8")), Some(8));
        assert_eq!(page_of(r), None);
    }
}
