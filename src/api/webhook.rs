//! Captain Data webhook payloads: which event a relayed webhook reports.
//!
//! A webhook is a hint to read now, never the proof of the end (DESIGN §1): this module only
//! names the event; the engine decides what a hint is worth.

use alloc::string::String;

/// The event a webhook reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WebhookKind {
    /// The run was created or scheduled: nothing to read yet.
    Created,
    /// "Job successfully finished.": read the status and the results now.
    Succeeded,
    /// "Job failed.": read the status now; the API's status says whether it is over.
    Failed,
    /// Anything else: ignored.
    Other,
}

/// A webhook as the engine sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Webhook {
    /// Which event.
    pub kind: WebhookKind,
    /// The payload's `error`, when a non-empty string (used in a JOB_FAILED message).
    pub error: Option<String>,
}

/// Names the event of a webhook payload from its `message`, its `error` and, when the payload
/// has one, an explicit event/type field (`event`, e.g. `"succeeded"` or `"job.failed"`).
///
/// Rules, case-insensitive, on `event` when it is a non-empty string, else on `message`:
/// - contains `fail` → [`WebhookKind::Failed`];
/// - contains `creat`, `schedul`, `queue` or `start` → [`WebhookKind::Created`] (checked
///   before success: "scheduled successfully" is a creation);
/// - contains `succe`, `finish` or `complet` → [`WebhookKind::Succeeded`];
/// - otherwise [`WebhookKind::Other`], or [`WebhookKind::Failed`] when `error` is a non-empty
///   string.
///
/// Misreading is never worse than a wasted read: no webhook ends a poll by itself.
///
/// ```
/// use captaindata_poller::api::{classify_webhook, WebhookKind};
/// let kind = |m| classify_webhook(Some(m), None, None).kind;
/// assert_eq!(kind("Job successfully finished."), WebhookKind::Succeeded);
/// assert_eq!(kind("Job failed."), WebhookKind::Failed);
/// assert_eq!(kind("Job created."), WebhookKind::Created);
/// assert_eq!(classify_webhook(None, None, Some("job.failed")).kind, WebhookKind::Failed);
/// ```
pub fn classify_webhook(
    message: Option<&str>,
    error: Option<&str>,
    event: Option<&str>,
) -> Webhook {
    let error = error.filter(|e| !e.trim().is_empty()).map(String::from);
    let text = event
        .filter(|e| !e.trim().is_empty())
        .or(message)
        .unwrap_or_default()
        .to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| text.contains(w));
    let kind = if has(&["fail"]) {
        WebhookKind::Failed
    } else if has(&["creat", "schedul", "queue", "start"]) {
        WebhookKind::Created
    } else if has(&["succe", "finish", "complet"]) {
        WebhookKind::Succeeded
    } else if error.is_some() {
        WebhookKind::Failed
    } else {
        WebhookKind::Other
    };
    Webhook { kind, error }
}

#[cfg(test)]
mod tests {
    use super::*;
    use WebhookKind::*;

    fn kind(message: Option<&str>, error: Option<&str>, event: Option<&str>) -> WebhookKind {
        classify_webhook(message, error, event).kind
    }

    #[test]
    fn the_documented_messages() {
        assert_eq!(
            kind(Some("Job successfully finished."), None, None),
            Succeeded
        );
        assert_eq!(kind(Some("JOB FAILED."), Some("quota"), None), Failed);
        for created in ["Job created.", "Job scheduled successfully", "Job started"] {
            assert_eq!(kind(Some(created), None, None), Created, "{created}");
        }
        assert_eq!(kind(Some("Hello"), None, None), Other);
        assert_eq!(kind(None, None, None), Other);
    }

    #[test]
    fn an_explicit_event_wins_over_the_message() {
        assert_eq!(
            kind(Some("Job failed."), None, Some("succeeded")),
            Succeeded
        );
        assert_eq!(kind(None, None, Some("job.Failed")), Failed);
        assert_eq!(kind(None, None, Some("job.created")), Created);
        assert_eq!(kind(Some("Job failed."), None, Some(" ")), Failed);
    }

    #[test]
    fn error_text_is_kept_when_not_empty_and_marks_an_unknown_event_failed() {
        let hook = classify_webhook(Some("?"), Some("quota reached"), None);
        assert_eq!(
            (hook.kind, hook.error.as_deref()),
            (Failed, Some("quota reached"))
        );
        let hook = classify_webhook(Some("Job successfully finished."), Some(""), None);
        assert_eq!((hook.kind, hook.error), (Succeeded, None));
    }
}
