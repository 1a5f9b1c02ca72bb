//! Following `paging.next` in each of its forms: a URL, a path, a query or a page number.

use alloc::string::String;

use super::Next;
use crate::engine::origin::{origin_prefix, resolve_next};
use crate::engine::paging::{page_number, page_of, with_page};
use crate::engine::{ErrorCode, Poller, RequestKind};

impl Poller {
    /// Goes to the page `next` names, or treats the page as the tail when `next` names it.
    pub(super) fn follow(&mut self, next: &str, len: usize) {
        let base = self.config.base_url();
        let path = base.get(origin_prefix(base).len()..).unwrap_or_default();
        let first = [path, "/jobs/", self.config.job_uid(), "/results"].concat();
        let current = self.state.page.clone().unwrap_or(first);
        let location = match page_number(next) {
            Some(n) => self.numbered_page(&current, n),
            None => resolve_next(base, &current, next).map(Some),
        };
        match location {
            // A page that names itself as next is the tail, not a loop to spin in.
            Ok(None) => self.after_poll(),
            Ok(Some(location)) if location == current => self.after_poll(),
            Ok(Some(location)) => {
                let s = &mut self.state;
                s.paged_len = s.paged_len.max(len);
                s.pending_next = Some(location);
                s.next = Next::Fetch(RequestKind::Results);
            }
            Err(why) => self.fail(ErrorCode::BadResponse, why.into(), None),
        }
    }

    /// The location of page `n` after `current`; `None` when it is `current` itself.
    /// The first page is read without a `page` parameter: its number is learned from its own
    /// `next` ("1" → pages count from 0, "2" → from 1).
    pub(super) fn numbered_page(
        &mut self,
        current: &str,
        n: u64,
    ) -> Result<Option<String>, &'static str> {
        let s = &mut self.state;
        let on_first = page_of(current).is_none();
        if on_first && s.page_base.is_none() && (1..=2).contains(&n) {
            s.page_base = Some(n - 1);
        }
        let here = page_of(current).or(s.page_base.filter(|_| on_first));
        match here {
            Some(here) if n == here => Ok(None),
            // Going back would deliver rows twice.
            Some(here) if n < here => Err("paging.next goes back to an earlier page"),
            _ => Ok(Some(with_page(current, n))),
        }
    }
}
