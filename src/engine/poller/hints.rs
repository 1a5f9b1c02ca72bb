//! Webhooks: hints to read now, never the proof of the end (see [`crate::engine::Event::Webhook`]).

use super::Next;
use crate::api::{Webhook, WebhookKind};
use crate::engine::{Poller, RequestKind, SleepReason};

impl Poller {
    /// A webhook is a hint to read now; only the API's status ends the run (see
    /// [`crate::engine::Event::Webhook`]).
    pub(super) fn on_webhook(&mut self, hook: Webhook, now_ms: u64) {
        let s = &mut self.state;
        let acted = matches!(hook.kind, WebhookKind::Succeeded | WebhookKind::Failed)
            && s.ending.is_none()
            && s.hinted != Some(hook.kind);
        // The glue cancels a pending timer on every webhook: re-arm what is left of it.
        self.sleep_cancelled(false, now_ms);
        if !acted {
            return;
        }
        let s = &mut self.state;
        s.hinted = Some(hook.kind);
        s.hint_error = hook.error.or(s.hint_error.take());
        s.hint_reads = self.config.webhook_reads;
        // Cut an interval short (a backoff is not: the server asked for it).
        if let Next::Sleep {
            reason: SleepReason::Interval,
            ..
        } = s.next
        {
            s.next = Next::Fetch(RequestKind::Run);
        }
    }

    /// The fast cadence after a webhook is on (never in step mode: a round is one round).
    pub(super) fn hint_active(&self) -> bool {
        self.state.hint_reads > 0 && !self.config.step_mode
    }
}
