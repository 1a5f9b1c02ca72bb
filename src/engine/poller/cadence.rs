//! The pause between polls, and what a tick reads first.
//!
//! - **The pause** after a tick is `interval_ms` from the tick's last read, lengthened by up to
//!   5 % (the jitter that spreads clients started together, from `Config::seed`), never
//!   shortened ([`Cadence::jittered`]). A hidden page waits at least `hidden_interval_ms`, or
//!   not at all until visible ([`Cadence::pause`]); an offline runtime sends nothing. Every
//!   timer is at most 2^31−1 ms. In step mode a tick's end is the end of the round (yield).
//!   The shortest `intervalMs` against a remote API is a validation rule
//!   ([`crate::engine::MIN_REMOTE_INTERVAL_MS`]); a backoff's delay is `retries.rs`'s, and the
//!   reads at the end of a run and after a webhook are paced by `ending.rs` and `hints.rs`.
//! - **What a tick reads first**: status-guided, the status (and the results only when it says
//!   they can bring something: the coordinator asks the count, [`QUIET_TICKS`] and the lag
//!   model in `lag.rs`); every tick, or while rows come on every tick past the first page, the
//!   results ([`Cadence::status_first`]). After a results read, the status is read when it is
//!   due (`status_every`), when growth slowed down (the sign of a run ending), or never seen.

use crate::engine::backoff::SplitMix64;
use crate::engine::config::{Config, ReadMode};
use crate::engine::protocol::{RequestKind, SleepReason};

/// In [`ReadMode::StatusGuided`]: after this many ticks in a row whose status said nothing
/// new, the next tick reads the results anyway; bursts a few intervals apart (Captain Data
/// batch-processes) do not trigger it. Each such read that finds nothing the count hid
/// doubles the wait, at most twice (24 ticks); one that finds rows sets it back. A run whose
/// count is right, with bursts further apart than the wait, so does not download its partly
/// filled page again in every gap. A row that a stuck or lagging count hides is delivered at
/// most `QUIET_TICKS + 1` intervals after it appeared (70 s at the default 10 s) once the
/// count was caught hiding one, and at most 25 intervals after it while the count was right.
pub const QUIET_TICKS: u32 = 6;

/// The quiet wait grows to at most `QUIET_TICKS << MAX_QUIET_DOUBLINGS` ticks (24: 4 minutes
/// at the default 10 s), the longest a row a stuck count hides waits for a run whose count
/// was right so far.
pub(super) const MAX_QUIET_DOUBLINGS: u32 = 2;

/// Seeds the jitter's generator apart from the backoff's (same `Config::seed`).
const JITTER_STREAM: u64 = 0x6a09_e667_f3bc_c908;

/// `setTimeout` takes at most 2^31−1 ms; more wraps to an immediate (busy) timer.
const MAX_TIMER_MS: u64 = 2_147_483_647;

/// The end of a tick: the pause before the next one, or (step mode) the end of the round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pause {
    /// Sleep `ms`, then read `then`.
    Sleep { ms: u64, then: RequestKind },
    /// Step mode: the round is over.
    Yield,
}

/// The steady cadence: ticks, their reads, and the page's conditions (hidden, offline). The
/// settings it applies (`interval_ms`, `status_every`, `read_mode`, `step_mode`,
/// `hidden_interval_ms`) are read from the [`Config`] each method is given.
#[derive(Debug)]
pub(super) struct Cadence {
    /// Results polls done (across resumes), for `status_every`.
    polls: u32,
    /// Rows the current poll has delivered so far.
    poll_rows: u64,
    /// Rows the previous poll delivered: growth slowing down hints that the run is ending.
    prev_poll_rows: u64,
    /// Status-guided: ticks in a row whose status said nothing new since the last results read.
    quiet: u32,
    /// Results reads in a row made only because the ticks were quiet long, that found nothing:
    /// the count was right, so the next such read waits twice as long.
    quiet_misses: u32,
    /// This tick's results read is made only because the ticks were quiet long.
    quiet_read: bool,
    /// Results polls in a row that brought rows: from 2 on, rows come on every tick and a
    /// status-guided poller reads the results first.
    growing: u32,
    /// The results were read since the last interval sleep (one results read per tick).
    tick_read: bool,
    /// Jitter of the steady cadence.
    jitter: SplitMix64,
    /// The page is hidden ([`crate::engine::Event::Hidden`]): the steady cadence slows down.
    hidden: bool,
    /// The runtime is offline ([`crate::engine::Event::Online`]): nothing is sent, no retry is
    /// spent.
    offline: bool,
}

/// What follows a results read that reached the tail of a running run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TickEnd {
    /// Read the status now (it is due, growth slowed down, or it was never seen).
    pub read_status: bool,
    /// Otherwise, the pause before the next tick.
    pub pause: Pause,
}

impl Cadence {
    /// A cadence jittered from `seed`, and `polls`, `quiet` and `quiet_misses` carried over
    /// from a cursor.
    pub fn new(seed: u64, polls: u32, quiet: u32, quiet_misses: u32) -> Cadence {
        Cadence {
            polls,
            poll_rows: 0,
            prev_poll_rows: 0,
            quiet,
            quiet_misses,
            quiet_read: false,
            growing: 0,
            tick_read: false,
            // Another stream than the backoff's, from the same seed.
            jitter: SplitMix64::new(seed ^ JITTER_STREAM),
            hidden: false,
            offline: false,
        }
    }

    /// Results polls done, for the cursor.
    pub fn polls(&self) -> u32 {
        self.polls
    }

    /// Quiet status-guided ticks in a row, for the cursor.
    pub fn quiet(&self) -> u32 {
        self.quiet
    }

    /// Quiet-long results reads in a row that found nothing, for the cursor.
    pub fn quiet_misses(&self) -> u32 {
        self.quiet_misses
    }

    /// Rows the current poll has delivered so far (the lag model dates them).
    pub fn poll_rows(&self) -> u64 {
        self.poll_rows
    }

    /// Whether the results were read in this tick already.
    pub fn tick_read(&self) -> bool {
        self.tick_read
    }

    /// The runtime is offline: nothing is to be sent.
    pub fn offline(&self) -> bool {
        self.offline
    }

    /// Status-guided, and rows are not coming on every tick of a run past its first page
    /// (always in step mode): a tick starts with the status.
    ///
    /// On the first page every results read downloads every row so far: read blind, it saves
    /// one status request a tick but downloads the whole run again on the tick after the last
    /// rows, before the status says the run ended (and a drain downloads it once more). Past
    /// the first page, a blind read re-downloads at most the tail page of a longer run.
    pub fn status_first(&self, config: &Config, first_page: bool) -> bool {
        let guided = config.read_mode == ReadMode::StatusGuided;
        guided && (config.step_mode || self.growing < 2 || first_page)
    }

    /// The pause before the next tick: `interval_ms` after this tick's last read, lengthened
    /// by up to 5 % (the jitter that spreads clients started together). Never shorter: no
    /// client polls faster than it asked, and a tick's own requests do not shorten the pause
    /// after it (the cadence of the seed's loop, and of SWR's `refreshInterval`), so a run is
    /// read no more often than such a loop reads it.
    pub fn jittered(&mut self, config: &Config) -> u64 {
        let interval = u64::from(config.interval_ms);
        self.jitter.between(interval, interval + interval / 20)
    }

    /// The end of this tick: the next tick after a jittered interval, reading what it reads
    /// first; in step mode, the end of the round.
    pub fn next_tick(&mut self, config: &Config, first_page: bool) -> Pause {
        let then = match self.status_first(config, first_page) {
            true => RequestKind::Run,
            false => RequestKind::Results,
        };
        match config.step_mode {
            true => Pause::Yield,
            false => Pause::Sleep {
                ms: self.jittered(config),
                then,
            },
        }
    }

    /// The delay a sleep of `ms` really takes: at least 1 ms, at most a timer's range, and a
    /// steady-cadence sleep of a hidden page stretched to `hidden_interval_ms`; `None` when
    /// hidden polling is paused.
    pub fn pause(&self, config: &Config, ms: u64, reason: SleepReason) -> Option<u64> {
        let ms = match !self.hidden || reason != SleepReason::Interval {
            true => ms,
            false => ms.max(config.hidden_interval_ms?.into()),
        };
        // Not `Ord::clamp`: its `min <= max` assertion carries a formatted panic message.
        #[allow(clippy::manual_clamp)]
        Some(ms.max(1).min(MAX_TIMER_MS))
    }

    /// A sleep of `reason` is armed: after an interval, a new tick begins.
    pub fn slept(&mut self, reason: SleepReason) {
        if reason == SleepReason::Interval {
            self.tick_read = false;
        }
    }

    /// The results of this tick are being read (or, 404, cannot be: the status read that
    /// follows must not send the results read straight back).
    pub fn results_read(&mut self) {
        self.tick_read = true;
    }

    /// A read delivered `rows` new rows.
    pub fn delivered(&mut self, rows: u64) {
        self.poll_rows += rows;
    }

    /// A status-guided tick whose status said nothing new: no results read, the next tick
    /// after the pause.
    pub fn quiet_tick(&mut self) {
        self.quiet = self.quiet.saturating_add(1);
        self.growing = 0;
    }

    /// Quiet ticks enough in a row that the results are read whatever the count says (the
    /// wait doubled for each such read in a row that found nothing). When true, the read it
    /// starts is marked, so [`Cadence::polled`] learns whether the count hid anything.
    pub fn quiet_long(&mut self) -> bool {
        let doublings = self.quiet_misses.min(MAX_QUIET_DOUBLINGS);
        self.quiet_read = self.quiet >= QUIET_TICKS << doublings;
        self.quiet_read
    }

    /// A results read reached the tail of a running run (`results_first`: made before this
    /// tick's status; `status_seen`: a status was ever read): whether the status is read now,
    /// and the pause otherwise.
    pub fn polled(
        &mut self,
        config: &Config,
        first_page: bool,
        results_first: bool,
        status_seen: bool,
    ) -> TickEnd {
        self.polls = self.polls.saturating_add(1);
        self.growing = match self.poll_rows {
            0 => 0,
            _ => self.growing.saturating_add(1),
        };
        if core::mem::take(&mut self.quiet_read) {
            self.quiet_misses = match self.poll_rows {
                0 => self.quiet_misses.saturating_add(1),
                _ => 0,
            };
        }
        self.quiet = 0;
        self.tick_read = true;
        let pause = self.next_tick(config, first_page);
        let every = config.status_every;
        let due = every > 0 && self.polls % every == 0;
        // Growth that stopped or slowed down is the sign of a run ending: read the status now,
        // so completion is noticed within about one interval instead of two.
        let slowed = self.poll_rows == 0 || self.poll_rows < self.prev_poll_rows;
        let read_status = match results_first {
            true => config.step_mode || slowed || due || !status_seen,
            false => !status_seen,
        };
        self.prev_poll_rows = core::mem::take(&mut self.poll_rows);
        TickEnd { read_status, pause }
    }

    /// The page became hidden or visible: true when the poll is due at once (visible again
    /// after being hidden: the steady sleep is over).
    pub fn set_hidden(&mut self, hidden: bool) -> bool {
        let was = core::mem::replace(&mut self.hidden, hidden);
        was && !hidden
    }

    /// The runtime went offline or online: true when the poll is due at once (back online).
    pub fn set_online(&mut self, online: bool) -> bool {
        let was_offline = core::mem::replace(&mut self.offline, !online);
        was_offline && online
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cadence(edit: impl FnOnce(&mut Config)) -> (Cadence, Config) {
        let mut config = Config::new("https://api.captaindata.co/v3", "j").unwrap();
        config.interval_ms = 1_000;
        edit(&mut config);
        (Cadence::new(config.seed, 0, 0, 0), config)
    }

    #[test]
    fn the_pause_is_the_interval_lengthened_by_at_most_five_percent() {
        let (mut c, config) = cadence(|_| {});
        for _ in 0..200 {
            assert!((1_000..=1_050).contains(&c.jittered(&config)));
        }
        let (mut same, config) = cadence(|_| {});
        let (mut other, _) = cadence(|config| config.seed = 1);
        let a: alloc::vec::Vec<u64> = (0..8).map(|_| same.jittered(&config)).collect();
        let b: alloc::vec::Vec<u64> = (0..8).map(|_| other.jittered(&config)).collect();
        assert_ne!(a, b);
    }

    #[test]
    fn a_hidden_page_waits_the_hidden_interval_or_not_at_all() {
        let (mut c, config) = cadence(|_| {});
        assert_eq!(c.pause(&config, 1_000, SleepReason::Interval), Some(1_000));
        assert!(!c.set_hidden(true));
        assert_eq!(c.pause(&config, 1_000, SleepReason::Interval), Some(60_000));
        // A backoff is the server's: not stretched.
        assert_eq!(c.pause(&config, 1_000, SleepReason::Backoff), Some(1_000));
        assert!(c.set_hidden(false));
        let (mut paused, paused_config) = cadence(|config| config.hidden_interval_ms = None);
        paused.set_hidden(true);
        assert_eq!(
            paused.pause(&paused_config, 1_000, SleepReason::Interval),
            None
        );
        assert_eq!(c.pause(&config, 0, SleepReason::Interval), Some(1));
        assert_eq!(
            c.pause(&config, u64::MAX, SleepReason::Backoff),
            Some(MAX_TIMER_MS)
        );
    }

    #[test]
    fn status_guided_ticks_read_the_status_first_until_rows_come_on_every_tick() {
        let (mut c, config) = cadence(|_| {});
        assert!(c.status_first(&config, false));
        for _ in 0..2 {
            c.delivered(3);
            c.polled(&config, false, false, true);
        }
        assert!(!c.status_first(&config, false));
        // On the first page a blind read downloads the whole run again: status first.
        assert!(c.status_first(&config, true));
        c.quiet_tick();
        assert!(c.status_first(&config, false));
        let (every, every_config) = cadence(|config| config.read_mode = ReadMode::EveryTick);
        assert!(!every.status_first(&every_config, true));
    }

    #[test]
    fn after_a_results_read_the_status_is_read_when_due_or_when_growth_slows() {
        let (mut c, config) = cadence(|config| {
            config.read_mode = ReadMode::EveryTick;
            config.status_every = 3;
        });
        c.delivered(5);
        assert!(
            c.polled(&config, false, true, false).read_status,
            "never seen"
        );
        c.delivered(5);
        let end = c.polled(&config, false, true, true);
        assert!(!end.read_status);
        assert!(matches!(
            end.pause,
            Pause::Sleep {
                then: RequestKind::Results,
                ..
            }
        ));
        c.delivered(5);
        assert!(
            c.polled(&config, false, true, true).read_status,
            "every 3rd poll"
        );
        c.delivered(2);
        assert!(
            c.polled(&config, false, true, true).read_status,
            "fewer rows than before"
        );
        assert_eq!(c.polls(), 4);
    }

    #[test]
    fn quiet_ticks_add_up_until_a_results_read() {
        let (mut c, config) = cadence(|_| {});
        for _ in 0..QUIET_TICKS {
            assert!(!c.quiet_long());
            c.quiet_tick();
        }
        assert!(c.quiet_long());
        c.polled(&config, true, false, true);
        assert_eq!(c.quiet(), 0);
    }

    /// Quiet ticks until the quiet-long read, which then delivers `rows`: how many ticks.
    fn quiet_ticks_to_read(c: &mut Cadence, config: &Config, rows: u64) -> u32 {
        let mut ticks = 0;
        while !c.quiet_long() {
            c.quiet_tick();
            ticks += 1;
        }
        c.delivered(rows);
        c.polled(config, false, false, true);
        ticks
    }

    #[test]
    fn a_quiet_read_that_finds_nothing_doubles_the_wait_and_one_that_finds_rows_resets_it() {
        let (mut c, config) = cadence(|_| {});
        let waits: alloc::vec::Vec<u32> = (0..4)
            .map(|_| quiet_ticks_to_read(&mut c, &config, 0))
            .collect();
        assert_eq!(waits, [6, 12, 24, 24]);
        // A read the count asked for says nothing of it: the wait stays long.
        c.delivered(5);
        c.polled(&config, false, false, true);
        assert_eq!(quiet_ticks_to_read(&mut c, &config, 3), 24);
        assert_eq!(c.quiet_misses(), 0);
        assert_eq!(quiet_ticks_to_read(&mut c, &config, 0), 6);
    }

    #[test]
    fn a_step_ends_its_round_instead_of_sleeping() {
        let (mut c, config) = cadence(|config| config.step_mode = true);
        assert_eq!(c.next_tick(&config, false), Pause::Yield);
        assert!(!c.set_online(false));
        assert!(c.offline());
        assert!(c.set_online(true));
    }
}
