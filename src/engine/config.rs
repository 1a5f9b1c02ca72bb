//! [`Config`]: everything the engine needs to know up front, with every default in one place.

use alloc::string::String;

use super::validation::{validate_base_url, validate_path_segment, ConfigError};
use crate::api::decimal;

/// Retry policy for 429, 5xx, timeouts, network errors and malformed bodies.
///
/// # Default
/// `retries: 5`, `min_delay_ms: 1_000`, `max_delay_ms: 60_000`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Consecutive failed attempts of one request that are retried before giving up.
    pub retries: u32,
    /// Lower bound of every backoff delay and of a `Retry-After` hint.
    pub min_delay_ms: u32,
    /// Upper bound of every backoff delay and of a `Retry-After` hint.
    pub max_delay_ms: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            retries: 5,
            min_delay_ms: 1_000,
            max_delay_ms: 60_000,
        }
    }
}

/// Checks that a retry policy's delays are in order: the shortest not above the longest.
///
/// ```
/// use captaindata_poller::engine::{validate_retry, RetryPolicy};
/// let retry = RetryPolicy { min_delay_ms: 90_000, ..RetryPolicy::default() };
/// assert_eq!(validate_retry(&retry).unwrap_err().option, "retry.maxDelayMs");
/// ```
pub fn validate_retry(retry: &RetryPolicy) -> Result<(), ConfigError> {
    if retry.min_delay_ms <= retry.max_delay_ms {
        return Ok(());
    }
    let got = decimal(retry.max_delay_ms.into());
    let what = ["at least `retry.minDelayMs` (got ", &got, ")"].concat();
    Err(ConfigError::expected("retry.maxDelayMs", &what))
}

/// How the end of a run is read once the API's status says it is over (see
/// `engine/poller/ending.rs`). Counts lag, so only a tail page that is not full proves the
/// end: a full one is read again, a count that trails the rows is waited for.
///
/// # Default
/// [`Config::ending`] is `None`: `EndPolicy::from(config.retry)`, the values of the retry
/// policy in force (`rereads`, `count_waits` and `missing_reads` are its `retries`,
/// `reread_delay_ms` its `min_delay_ms`), so a run's end is read at the pace of its retries
/// unless set apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EndPolicy {
    /// Re-reads of a full tail page (or one behind its count) before completing.
    pub rereads: u32,
    /// The pause before each re-read, and the shortest wait for a trailing count.
    pub reread_delay_ms: u32,
    /// Status reads that wait for a count trailing the rows delivered.
    pub count_waits: u32,
    /// `/results` 404s after the end, over every round, past which a run that counts no rows
    /// completes with none.
    pub missing_reads: u32,
}

impl From<RetryPolicy> for EndPolicy {
    fn from(retry: RetryPolicy) -> EndPolicy {
        EndPolicy {
            rereads: retry.retries,
            reread_delay_ms: retry.min_delay_ms,
            count_waits: retry.retries,
            missing_reads: retry.retries,
        }
    }
}

/// When the engine reads the results while the run is going.
///
/// # Default
/// [`ReadMode::StatusGuided`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadMode {
    /// Read the run's status (small, with `row_count`) at the cadence, and the results only
    /// when they can bring something: the count is past the rows delivered (which covers a
    /// count past the end of the current page: the read follows `paging.next`), the run gives
    /// no count, the run is over (the end-of-run drain), or after [`QUIET_TICKS`] ticks in a
    /// row whose count said nothing new (counts lag, or went down: read anyway; the wait
    /// doubles while such reads find nothing the count hid, see [`QUIET_TICKS`]). On a quiet
    /// tick that is one small request; a partly filled last page is not downloaded again.
    ///
    /// While rows come on every tick (two results reads in a row brought rows) of a run past
    /// its first page, reading the status first would only add a request: the results are
    /// read first on each tick, as in [`ReadMode::EveryTick`], until a read brings nothing. A
    /// run on its first page keeps reading the status first (a blind read there downloads the
    /// whole run again). In step mode every round reads the status first (one request when
    /// nothing changed).
    ///
    /// A count seen behind the rows (a read brought more rows than it said) is not waited
    /// for: the results are read when the next batch is due by the pace of the batches
    /// (`engine/poller/lag.rs`), until the count announces rows first again.
    ///
    /// [`QUIET_TICKS`]: crate::engine::QUIET_TICKS
    #[default]
    StatusGuided,
    /// Read the results on every tick; the status once every [`Config::status_every`] reads
    /// and early after a read that brought no new rows, or fewer than the read before.
    EveryTick,
}

/// Everything the engine needs to know up front. Build it with [`Config::new`],
/// which validates the base URL and the job uid, then set the public fields.
///
/// # Default
/// `interval_ms: 10_000`, `status_every: 5`, `max_duration_ms: Some(21_600_000)` (6 h),
/// `max_requests: None`, `timeout_ms: 30_000`, `retry: RetryPolicy::default()`,
/// `seed: 0`, `step_mode: false`, `dedupe: false`, `page_size: 1_000`,
/// `ending: None`, `webhook_reads: 10`, `webhook_delay_ms: None`,
/// `read_mode: ReadMode::StatusGuided`, `hidden_interval_ms: Some(60_000)`.
/// The base URL of the JS options is [`Config::DEFAULT_BASE_URL`]; a step (`pollStep`)
/// starts from [`Config::set_step`]: `max_requests: Some(50)`, `max_duration_ms: Some(25_000)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    base_url: String,
    job_uid: String,
    /// Cadence of the reads while the run is going: the pause from a tick's last read to the
    /// next tick. Each pause is lengthened by up to 5 % (from `seed`), never shortened, so
    /// clients started together do not poll in step and none polls faster than it asked.
    pub interval_ms: u32,
    /// When results are read on every tick: read the run status once every N results polls
    /// (besides the early read after a poll that brought no new rows, or fewer than the poll
    /// before: the signs of a run ending).
    pub status_every: u32,
    /// Whether a tick reads the status first and the results only when they changed, or the
    /// results on every tick.
    pub read_mode: ReadMode,
    /// Hard stop: TIMEOUT once this much time has passed since start.
    pub max_duration_ms: Option<u64>,
    /// Hard stop: BUDGET_EXHAUSTED instead of sending request number `max_requests + 1`.
    pub max_requests: Option<u32>,
    /// Per-request timeout handed to the glue with each fetch.
    pub timeout_ms: u32,
    /// Backoff for transient failures.
    pub retry: RetryPolicy,
    /// Seed of the backoff jitter.
    pub seed: u64,
    /// Cron mode (`pollStep`): one round, then [`crate::engine::Action::Yield`]; budgets end
    /// the step with a cursor instead of an error.
    pub step_mode: bool,
    /// When set, rows carry keys (see [`crate::api::Page::keys`]) used to drop repeated rows.
    pub dedupe: bool,
    /// Rows in a full results page. Once the API's status says the run is over, the results
    /// are read until a page is not full: a tail page holding exactly this many rows is read
    /// again (see [`Config::ending`]) in case the count lagged. Learned from the API when it
    /// pages: the largest page that had a next page wins over this value; a longer page than
    /// this value raises it.
    pub page_size: usize,
    /// How the end of a run is read once the API says it is over; `None`: as the retries
    /// ([`EndPolicy::from`] `retry`).
    pub ending: Option<EndPolicy>,
    /// After a Succeeded or Failed webhook (see [`crate::engine::Event::Webhook`]): how many
    /// times the status is read again, `webhook_delay_ms` apart and each time with a drain of
    /// the results, while the API still says the run is going, before the normal
    /// `interval_ms` cadence resumes.
    pub webhook_reads: u32,
    /// The pause between the reads after a webhook; `None`: `retry.min_delay_ms`.
    pub webhook_delay_ms: Option<u32>,
    /// The slowest cadence of results reads while the page is hidden
    /// ([`crate::engine::Event::Hidden`]); `None` pauses them until it is visible again (the
    /// deadline still ends the poll).
    pub hidden_interval_ms: Option<u32>,
}

impl Config {
    /// The documented default `baseUrl` of the JS options.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.captaindata.co/v3";
    /// Default `max_duration_ms` of a poller: 6 h (never poll forever).
    pub const DEFAULT_MAX_DURATION_MS: u64 = 21_600_000;
    /// Default per-request timeout.
    pub const DEFAULT_TIMEOUT_MS: u32 = 30_000;
    /// Default `max_requests` of a step: the free Workers plan allows 50 subrequests.
    pub const STEP_MAX_REQUESTS: u32 = 50;
    /// Default duration (`deadlineMs`) of a step: well inside a Worker's 30 s wall-clock limit.
    pub const STEP_DEADLINE_MS: u64 = 25_000;

    /// Validates `base_url` (https, or http for localhost/127.0.0.1/`[::1]`; no userinfo,
    /// query or fragment; a trailing `/` is dropped) and `job_uid` (one path segment).
    pub fn new(base_url: &str, job_uid: &str) -> Result<Config, ConfigError> {
        validate_path_segment("jobUid", job_uid)?;
        Ok(Config {
            base_url: validate_base_url(base_url)?,
            job_uid: job_uid.into(),
            interval_ms: 10_000,
            status_every: 5,
            read_mode: ReadMode::default(),
            max_duration_ms: Some(Config::DEFAULT_MAX_DURATION_MS),
            max_requests: None,
            timeout_ms: Config::DEFAULT_TIMEOUT_MS,
            retry: RetryPolicy::default(),
            seed: 0,
            step_mode: false,
            dedupe: false,
            page_size: 1_000,
            ending: None,
            webhook_reads: 10,
            webhook_delay_ms: None,
            hidden_interval_ms: Some(60_000),
        })
    }

    /// Cron mode with a step's budgets: [`Config::STEP_MAX_REQUESTS`] requests within
    /// [`Config::STEP_DEADLINE_MS`] (either may be set again afterwards).
    pub fn set_step(&mut self) {
        self.step_mode = true;
        self.max_requests = Some(Config::STEP_MAX_REQUESTS);
        self.max_duration_ms = Some(Config::STEP_DEADLINE_MS);
    }

    /// The validated base URL, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The validated job uid.
    pub fn job_uid(&self) -> &str {
        &self.job_uid
    }

    /// The end policy in force.
    pub(super) fn end_policy(&self) -> EndPolicy {
        self.ending.unwrap_or(EndPolicy::from(self.retry))
    }

    /// The pause between the reads after a webhook, its default filled in.
    pub(super) fn webhook_delay(&self) -> u32 {
        self.webhook_delay_ms.unwrap_or(self.retry.min_delay_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_and_webhook_timings_follow_the_retry_policy_unless_set() {
        let mut config = Config::new(Config::DEFAULT_BASE_URL, "j").unwrap();
        config.retry = RetryPolicy {
            retries: 3,
            min_delay_ms: 100,
            max_delay_ms: 5_000,
        };
        let end = config.end_policy();
        assert_eq!((end.rereads, end.count_waits, end.missing_reads), (3, 3, 3));
        assert_eq!((end.reread_delay_ms, config.webhook_delay()), (100, 100));
        let apart = EndPolicy {
            rereads: 1,
            reread_delay_ms: 2_000,
            ..EndPolicy::from(config.retry)
        };
        config.ending = Some(apart);
        config.webhook_delay_ms = Some(500);
        assert_eq!(config.end_policy(), apart);
        assert_eq!(config.webhook_delay(), 500);
    }

    #[test]
    fn a_step_has_the_step_budgets() {
        let mut step = Config::new(Config::DEFAULT_BASE_URL, "j").unwrap();
        assert_eq!(step.max_duration_ms, Some(21_600_000));
        assert_eq!(step.timeout_ms, 30_000);
        step.set_step();
        assert!(step.step_mode);
        assert_eq!(step.max_requests, Some(50));
        assert_eq!(step.max_duration_ms, Some(25_000));
    }
}
