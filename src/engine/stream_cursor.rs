//! Cursors for rows that came another way than the results pages: the worker's stream, which
//! delivers a run's rows by offset from a store it also serves as fixed pages (`?page=N` of
//! `page_size` rows, numbered from 1). A poller resumed from such a cursor reads those pages
//! from where the stream left off, so a client can move between the two without a row lost or
//! delivered twice.

use alloc::string::String;

use super::cursor::CursorState;
use super::paging::with_page;
use super::url::origin_prefix;
use super::{Config, ConfigError};

impl Config {
    /// The resume token after the first `offset` rows of the run, as a poller reading the
    /// worker's fixed pages of `page_size` rows would hold it.
    ///
    /// ```
    /// use captaindata_poller::engine::{Config, Poller};
    /// let config = Config::new("https://worker.example/v3", "run-1").unwrap();
    /// let cursor = config.cursor_at(1_250, 1_000);
    /// assert_eq!(config.cursor_offset(&cursor), Ok(1_250));
    /// assert!(Poller::new(config, Some(&cursor), 0).is_ok());
    /// ```
    pub fn cursor_at(&self, offset: u64, page_size: u64) -> String {
        let page_size = page_size.max(1);
        let page = offset / page_size + 1;
        let base = self.base_url();
        let path = base.get(origin_prefix(base).len()..).unwrap_or_default();
        let first = [path, "/jobs/", self.job_uid(), "/results"].concat();
        CursorState {
            job_uid: self.job_uid().into(),
            offset,
            // Below the page size, so it fits a usize on every target.
            skip: usize::try_from(offset % page_size).unwrap_or(0),
            page: (page > 1).then(|| with_page(&first, page)),
            ..CursorState::default()
        }
        .encode()
    }

    /// Rows delivered before `cursor` (a cursor of this run): where a stream resumes.
    pub fn cursor_offset(&self, cursor: &str) -> Result<u64, ConfigError> {
        CursorState::decode(cursor, self.job_uid()).map(|state| state.offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config::new("http://127.0.0.1:8787/v3", "j").unwrap()
    }

    #[test]
    fn pages_and_skips_follow_the_offset() {
        let c = config();
        let at = |offset| CursorState::decode(&c.cursor_at(offset, 50), "j").unwrap();
        assert_eq!((at(0).page, at(0).skip), (None, 0));
        assert_eq!((at(49).page, at(49).skip), (None, 49));
        assert_eq!(at(50).page.as_deref(), Some("/v3/jobs/j/results?page=2"));
        assert_eq!(at(50).skip, 0);
        assert_eq!(at(123).page.as_deref(), Some("/v3/jobs/j/results?page=3"));
        assert_eq!((at(123).offset, at(123).skip), (123, 23));
    }

    #[test]
    fn the_offset_of_a_cursor_round_trips_and_another_runs_is_refused() {
        let c = config();
        assert_eq!(c.cursor_offset(&c.cursor_at(7, 1)), Ok(7));
        let other = Config::new("http://127.0.0.1:8787/v3", "k").unwrap();
        assert_eq!(
            c.cursor_offset(&other.cursor_at(7, 1)).unwrap_err().option,
            "cursor"
        );
        assert!(c.cursor_offset("nope").is_err());
        // A page size of 0 is read as 1, never a division by zero.
        assert_eq!(c.cursor_offset(&c.cursor_at(3, 0)), Ok(3));
    }
}
