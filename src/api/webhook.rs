//! Captain Data webhook payloads: which event a webhook reports.
//!
//! The one classifier of the package: `webhookReceived(payload)`, `pollStep({ webhook })`, a
//! follower tab's relay and the worker (through the exported `classifyWebhook`) all hand it
//! the raw payload. A webhook is a hint to read now, never the proof of the end (DESIGN §1):
//! this module only names the event; the engine decides what a hint is worth.

use alloc::string::String;

use super::first_chars;

/// What a webhook payload naming another run is refused with (`webhookReceived`, `pollStep`).
pub const OTHER_RUN_TEXT: &str = "The webhook payload's `job_uid` is not this poller's `jobUid`";

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

impl WebhookKind {
    /// The name JS sees (`classifyWebhook`): `"created"`, `"succeeded"`, `"failed"`, `"other"`.
    pub fn as_str(self) -> &'static str {
        match self {
            WebhookKind::Created => "created",
            WebhookKind::Succeeded => "succeeded",
            WebhookKind::Failed => "failed",
            WebhookKind::Other => "other",
        }
    }
}

/// A webhook as the engine sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Webhook {
    /// Which event.
    pub kind: WebhookKind,
    /// The payload's `error` text, when a non-empty string (used in a JOB_FAILED message),
    /// cut to [`MAX_ERROR_CHARS`] characters.
    pub error: Option<String>,
}

/// The payload's `error` field: documented as null or a string; `true` is seen too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WebhookError<'a> {
    /// Absent, `null`, `false`, an empty string, or any other type.
    #[default]
    None,
    /// `true`: it failed, without a reason.
    Flag,
    /// A non-empty string: it failed, for this reason.
    Text(&'a str),
}

/// The fields of a raw webhook payload that name its event, borrowed from the body.
#[derive(Clone, Copy, Debug, Default)]
pub struct WebhookPayload<'a> {
    /// `event`, e.g. `"job.succeeded"` (not in Captain Data's documented body; seen in relays).
    pub event: Option<&'a str>,
    /// `type`, e.g. `"failed"`.
    pub kind: Option<&'a str>,
    /// `message`: `"Job successfully finished."`, `"Job failed."`, `"Job successfully created."`.
    pub message: Option<&'a str>,
    /// `error`.
    pub error: WebhookError<'a>,
}

/// How much of a payload's error text is kept.
pub const MAX_ERROR_CHARS: usize = 500;

const FAILED: &[&str] = &["fail", "failed", "failure", "errored"];
const CREATED: &[&str] = &["created", "scheduled", "queued", "started"];
const SUCCEEDED: &[&str] = &[
    "finished",
    "succeeded",
    "success",
    "successful",
    "successfully",
    "completed",
];

impl WebhookPayload<'_> {
    /// Names the event. The words of `event`, `type` and `message` are read together
    /// (case-insensitive, split at anything that is not a letter), in this order:
    /// - an `error` that is `true` or a non-empty string, or a word `fail`, `failed`,
    ///   `failure`, `errored` → [`WebhookKind::Failed`];
    /// - `created`, `scheduled`, `queued`, `started` → [`WebhookKind::Created`] (checked before
    ///   success: "Job successfully created." is a creation);
    /// - `finished`, `succeeded`, `success…`, `completed` → [`WebhookKind::Succeeded`]
    ///   ("Job completed with failures" too: a run that finished with some failed inputs is
    ///   the `warning` status, a success);
    /// - otherwise [`WebhookKind::Other`].
    ///
    /// Misreading is never worse than a wasted read: no webhook ends a poll by itself.
    ///
    /// ```
    /// use captaindata_poller::api::{WebhookError, WebhookKind, WebhookPayload};
    /// let message = |m| WebhookPayload { message: Some(m), ..Default::default() }.classify().kind;
    /// assert_eq!(message("Job successfully finished."), WebhookKind::Succeeded);
    /// assert_eq!(message("Job failed."), WebhookKind::Failed);
    /// assert_eq!(message("Job successfully created."), WebhookKind::Created);
    /// let hook = WebhookPayload { error: WebhookError::Text("quota exceeded"), ..Default::default() }.classify();
    /// assert_eq!((hook.kind, hook.error.as_deref()), (WebhookKind::Failed, Some("quota exceeded")));
    /// ```
    pub fn classify(&self) -> Webhook {
        let error = match self.error {
            WebhookError::Text(text) => Some(String::from(first_chars(text, MAX_ERROR_CHARS))),
            _ => None,
        };
        let said = [self.event, self.kind, self.message];
        // Bytes, not chars: only ASCII letters make words (smaller code in the wasm).
        let has = |words: &[&str]| {
            said.iter().flatten().any(|text| {
                text.as_bytes()
                    .split(|b| !b.is_ascii_alphabetic())
                    .any(|word| {
                        words
                            .iter()
                            .any(|w| word.eq_ignore_ascii_case(w.as_bytes()))
                    })
            })
        };
        let kind = if self.error != WebhookError::None || has(FAILED) {
            WebhookKind::Failed
        } else if has(CREATED) {
            WebhookKind::Created
        } else if has(SUCCEEDED) {
            WebhookKind::Succeeded
        } else {
            WebhookKind::Other
        };
        Webhook { kind, error }
    }
}

/// [`WebhookPayload::classify`] of a payload with a `message`, an `error` text and an `event`.
///
/// ```
/// use captaindata_poller::api::{classify_webhook, WebhookKind};
/// assert_eq!(classify_webhook(None, None, Some("job.failed")).kind, WebhookKind::Failed);
/// ```
pub fn classify_webhook(
    message: Option<&str>,
    error: Option<&str>,
    event: Option<&str>,
) -> Webhook {
    let error = error
        .filter(|e| !e.is_empty())
        .map_or(WebhookError::None, WebhookError::Text);
    WebhookPayload {
        event,
        kind: None,
        message,
        error,
    }
    .classify()
}

#[cfg(test)]
mod tests {
    use super::*;
    use WebhookKind::*;

    fn message(text: &str) -> WebhookKind {
        classify_webhook(Some(text), None, None).kind
    }

    #[test]
    fn words_are_whole_words() {
        // "successfully" is not enough to be a creation, "failures" is not "failed".
        assert_eq!(message("Job completed with failures"), Succeeded);
        assert_eq!(message("JOB_FAILED"), Failed);
        assert_eq!(message("unfinished"), Other);
        assert_eq!(message("Hello"), Other);
        assert_eq!(classify_webhook(None, None, None).kind, Other);
    }

    #[test]
    fn error_text_is_kept_and_bounded() {
        let long = "x".repeat(2 * MAX_ERROR_CHARS);
        let hook = classify_webhook(Some("Job failed."), Some(&long), None);
        assert_eq!(hook.error.map(|e| e.len()), Some(MAX_ERROR_CHARS));
        let hook = classify_webhook(Some("Job successfully finished."), Some(""), None);
        assert_eq!((hook.kind, hook.error), (Succeeded, None));
    }
}
