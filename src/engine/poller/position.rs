//! Where the reading is in the run's results: the page being read, the rows of it already
//! consumed, the rows delivered, the repeats dropped (`dedupe`), and following `paging.next`
//! in each of its forms (a URL, a path, a query or a page number).

use alloc::string::String;
use alloc::vec::Vec;

use crate::engine::paging::{page_number, page_of, with_page};
use crate::engine::protocol::Batch;
use crate::engine::url::{origin_prefix, resolve_next};

/// The position in the results, and what was learned of the API's pages.
#[derive(Debug, Default)]
pub(super) struct Position {
    /// Page being read (path + query relative to the origin); `None` = first page.
    page: Option<String>,
    /// `paging.next` of `page`, being fetched; becomes `page` once it answers.
    pending_next: Option<String>,
    /// Rows of `page` already consumed (delivered or dropped as repeats).
    skip: usize,
    /// Rows delivered in total (across resumes).
    offset: u64,
    /// Keys of the previous page's rows, while the current one may start with repeats.
    prev_keys: Vec<String>,
    /// Keys of the current page's rows.
    cur_keys: Vec<String>,
    /// The number of the first page, learned from its `paging.next` ("1" → 0, "2" → 1).
    page_base: Option<u64>,
    /// Largest length of a page that had a next page: the API's page size.
    paged_len: usize,
    /// Largest length of any page read.
    largest_len: usize,
}

/// Where a page's `paging.next` leads.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Follow {
    /// The page is the tail (no usable next page, or one naming itself).
    Tail,
    /// The next page is to be read.
    Next,
    /// `paging.next` cannot be used: BAD_RESPONSE.
    Refused(&'static str),
}

impl Position {
    /// The position a cursor saved: `offset` rows delivered, `skip` rows of `page` consumed.
    pub fn resumed(page: Option<String>, skip: usize, offset: u64) -> Position {
        Position {
            page,
            skip,
            offset,
            ..Position::default()
        }
    }

    /// Rows delivered in total: the position of the next row.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Rows of the current page consumed.
    pub fn skip(&self) -> usize {
        self.skip
    }

    /// The page being read (`None`: the first).
    pub fn page(&self) -> Option<&String> {
        self.page.as_ref()
    }

    /// Still on the first page (every read of it downloads every row so far).
    pub fn on_first_page(&self) -> bool {
        self.page.is_none()
    }

    /// Rows in a full page: the API's, once it paged, else `configured` (or a longer page
    /// seen).
    pub fn page_size(&self, configured: usize) -> usize {
        match self.paged_len {
            0 => configured.max(self.largest_len),
            n => n,
        }
    }

    /// The URL of the results page to read next.
    pub fn url(&self, base: &str, job_uid: &str) -> String {
        match self.pending_next.as_ref().or(self.page.as_ref()) {
            None => [base, "/jobs/", job_uid, "/results"].concat(),
            Some(page) => [origin_prefix(base), page].concat(),
        }
    }

    /// A results page of `len` rows (with their `keys` when rows are deduplicated) was read:
    /// the rows not consumed yet, if any, as a batch; the position moves past them.
    pub fn take(&mut self, len: usize, keys: Option<Vec<String>>) -> Option<Batch> {
        if let Some(next) = self.pending_next.take() {
            self.prev_keys = core::mem::take(&mut self.cur_keys);
            self.page = Some(next);
            self.skip = 0;
        }
        self.largest_len = self.largest_len.max(len);
        let keys = keys.unwrap_or_default();
        let repeated = keys
            .iter()
            .take(len)
            .take_while(|k| self.prev_keys.contains(k))
            .count();
        let start = self.skip.max(repeated);
        let batch = (len > start).then_some(Batch {
            start,
            end: len,
            offset: self.offset,
        });
        if batch.is_some() {
            self.offset += (len - start) as u64;
        }
        self.skip = start.max(len);
        if repeated < len {
            // The run of repeated rows is over: the previous page's keys cannot matter again.
            self.prev_keys = Vec::new();
        }
        self.cur_keys = keys;
        batch
    }

    /// Goes to the page `next` names (read next), or treats the page (of `len` rows) as the
    /// tail when `next` names it.
    pub fn follow(&mut self, next: &str, len: usize, base: &str, job_uid: &str) -> Follow {
        let path = base.get(origin_prefix(base).len()..).unwrap_or_default();
        let first = [path, "/jobs/", job_uid, "/results"].concat();
        let current = self.page.clone().unwrap_or(first);
        let location = match page_number(next) {
            Some(n) => self.numbered_page(&current, n),
            None => resolve_next(base, &current, next).map(Some),
        };
        match location {
            // A page that names itself as next is the tail, not a loop to spin in.
            Ok(None) => Follow::Tail,
            Ok(Some(location)) if location == current => Follow::Tail,
            Ok(Some(location)) => {
                self.paged_len = self.paged_len.max(len);
                self.pending_next = Some(location);
                Follow::Next
            }
            Err(why) => Follow::Refused(why),
        }
    }

    /// The location of page `n` after `current`; `None` when it is `current` itself.
    /// The first page is read without a `page` parameter: its number is learned from its own
    /// `next` ("1" → pages count from 0, "2" → from 1).
    fn numbered_page(&mut self, current: &str, n: u64) -> Result<Option<String>, &'static str> {
        let on_first = page_of(current).is_none();
        if on_first && self.page_base.is_none() && (1..=2).contains(&n) {
            self.page_base = Some(n - 1);
        }
        let here = page_of(current).or(self.page_base.filter(|_| on_first));
        match here {
            Some(here) if n == here => Ok(None),
            // Going back would deliver rows twice.
            Some(here) if n < here => Err("paging.next goes back to an earlier page"),
            _ => Ok(Some(with_page(current, n))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    const BASE: &str = "https://api.captaindata.co/v3";

    fn keys(rows: core::ops::Range<u64>) -> Option<Vec<String>> {
        Some(rows.map(|k| k.to_string()).collect())
    }

    #[test]
    fn a_growing_page_gives_only_its_new_rows() {
        let mut p = Position::default();
        let first = p.take(3, None);
        assert_eq!(
            first,
            Some(Batch {
                start: 0,
                end: 3,
                offset: 0
            })
        );
        assert_eq!(p.take(3, None), None);
        assert_eq!(
            p.take(5, None),
            Some(Batch {
                start: 3,
                end: 5,
                offset: 3
            })
        );
        assert_eq!((p.offset(), p.skip()), (5, 5));
    }

    #[test]
    fn the_next_page_starts_at_its_first_row_and_repeats_are_dropped() {
        let mut p = Position::default();
        p.take(4, keys(0..4));
        assert_eq!(
            p.follow("/v3/jobs/j/results?page=1", 4, BASE, "j"),
            Follow::Next
        );
        assert_eq!(
            p.url(BASE, "j"),
            "https://api.captaindata.co/v3/jobs/j/results?page=1"
        );
        // The server repeats rows 2 and 3 at the start of page 1.
        let batch = p.take(4, keys(2..6));
        assert_eq!(
            batch,
            Some(Batch {
                start: 2,
                end: 4,
                offset: 4
            })
        );
        assert_eq!(
            p.page().map(String::as_str),
            Some("/v3/jobs/j/results?page=1")
        );
        assert_eq!(p.page_size(1_000), 4);
    }

    #[test]
    fn page_numbers_count_from_the_first_pages_own_next_and_never_go_back() {
        let mut p = Position::default();
        assert_eq!(p.follow("2", 10, BASE, "j"), Follow::Next);
        assert!(p.url(BASE, "j").ends_with("/v3/jobs/j/results?page=2"));
        p.take(10, None);
        assert_eq!(p.follow("2", 10, BASE, "j"), Follow::Tail);
        assert_eq!(
            p.follow("1", 10, BASE, "j"),
            Follow::Refused("paging.next goes back to an earlier page")
        );
        let mut other = Position::default();
        let refused = other.follow("https://evil.example/v3/jobs/j/results", 1, BASE, "j");
        assert!(matches!(refused, Follow::Refused(_)));
    }

    #[test]
    fn a_resumed_position_reads_its_page_past_the_rows_consumed() {
        let page = Some("/v3/jobs/j/results?page=3".into());
        let mut p = Position::resumed(page, 2, 3_002);
        assert!(!p.on_first_page());
        assert_eq!(
            p.take(5, None),
            Some(Batch {
                start: 2,
                end: 5,
                offset: 3_002
            })
        );
        assert_eq!(p.offset(), 3_005);
    }
}
