//! Webhooks: hints to read now, never the proof of the end (see
//! [`crate::engine::Event::Webhook`]).
//!
//! A Succeeded or Failed webhook, the first of its kind before the end, starts fast reads:
//! the status at once, then up to `Config::webhook_reads` more, `Config::webhook_delay_ms`
//! apart, each with a drain of the results, while the API still says the run is going. A
//! failed one lends its `error` to the JOB_FAILED message when the run gives none. In step
//! mode there are no fast reads (a round is one round): the hint makes the round read the
//! results.

use alloc::string::String;

use crate::api::{Webhook, WebhookKind};
use crate::engine::config::Config;

/// The webhooks acted on and the fast reads they started (by `Config::webhook_reads` and
/// `Config::webhook_delay_ms`).
#[derive(Debug, Default)]
pub(super) struct Hints {
    /// Fast status reads left.
    reads_left: u32,
    /// The webhook kind last acted on: a duplicate changes nothing.
    hinted: Option<WebhookKind>,
    /// A failed webhook's `error`, for the JOB_FAILED message when the run gives none.
    error: Option<String>,
}

impl Hints {
    /// A webhook arrived (`over`: the API already said the run is over): true when it is
    /// acted on (the status is to be read at once).
    pub fn received(&mut self, config: &Config, hook: Webhook, over: bool) -> bool {
        let acted = matches!(hook.kind, WebhookKind::Succeeded | WebhookKind::Failed)
            && !over
            && self.hinted != Some(hook.kind);
        if acted {
            self.hinted = Some(hook.kind);
            self.error = hook.error.or(self.error.take());
            self.reads_left = config.webhook_reads;
        }
        acted
    }

    /// The fast cadence after a webhook is on (never in step mode: a round is one round).
    pub fn active(&self, config: &Config) -> bool {
        self.reads_left > 0 && !config.step_mode
    }

    /// One fast read is spent.
    pub fn spend(&mut self) {
        self.reads_left -= 1;
    }

    /// A webhook was acted on (a step reads the results: the end is near).
    pub fn hinted(&self) -> bool {
        self.hinted.is_some()
    }

    /// A failed webhook's `error`.
    pub fn error(&self) -> Option<String> {
        self.error.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::classify_webhook;

    fn hook(message: &str, error: Option<&str>) -> Webhook {
        classify_webhook(Some(message), error, None)
    }

    fn config(step_mode: bool) -> Config {
        let mut config = Config::new("https://api.captaindata.co/v3", "j").unwrap();
        config.webhook_reads = 2;
        config.step_mode = step_mode;
        config
    }

    #[test]
    fn an_end_webhook_starts_the_fast_reads_once_per_kind() {
        let (mut h, c) = (Hints::default(), config(false));
        assert!(!h.received(&c, hook("Job created.", None), false));
        assert!(!h.active(&c));
        assert!(h.received(&c, hook("Job successfully finished.", None), false));
        assert!(!h.received(&c, hook("Job successfully finished.", None), false));
        assert!(h.active(&c));
        h.spend();
        h.spend();
        assert!(!h.active(&c));
        assert!(h.received(&c, hook("Job failed.", Some("quota reached")), false));
        assert_eq!(h.error().as_deref(), Some("quota reached"));
    }

    #[test]
    fn after_the_end_or_in_a_step_there_are_no_fast_reads() {
        let (mut h, c) = (Hints::default(), config(false));
        assert!(!h.received(&c, hook("Job successfully finished.", None), true));
        let (mut step, c) = (Hints::default(), config(true));
        assert!(step.received(&c, hook("Job successfully finished.", None), false));
        assert!(!step.active(&c));
        assert!(step.hinted());
    }
}
