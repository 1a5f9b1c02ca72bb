//! Captain Data v4 run statuses (DESIGN §7): the one classifier of v4 statuses, for the
//! worker's v4 runs (through the exported `classifyV4Status`) and anything else that reads them.
//!
//! A v4 run is served to readers in the v3 shapes, so each v4 status also names the v3 status a
//! reader sees and, when the run ended without success, the final error its poller reports.

use super::{ErrorCode, RunClass};

/// What a v4 run status means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct V4Status {
    /// The package's class of the status: active, paused, succeeded or failed.
    pub class: RunClass,
    /// The v3 status a reader of the run is shown (`pending`, `running`, `paused`,
    /// `finished`, `warning`, `shutdown`, `stopped`).
    pub v3_status: &'static str,
    /// For a failure: the final error a reader's poller ends with (`JOB_FAILED`, or
    /// `ALL_INPUTS_FAILED` for an invalid run: polling again cannot help).
    pub error: Option<ErrorCode>,
}

const fn status(class: RunClass, v3_status: &'static str, error: Option<ErrorCode>) -> V4Status {
    V4Status {
        class,
        v3_status,
        error,
    }
}

/// Classifies a v4 run status, case-insensitively:
/// - `CREATED`, `QUEUED`, `SCHEDULED`: active, not started (`pending`);
/// - `RUNNING`: active (`running`);
/// - `BLOCKED` (dependencies or resource limits): paused, not over and may last (`paused`);
/// - `SUCCEEDED`: succeeded (`finished`); `PARTIAL_SUCCEEDED` (some inputs failed, the results
///   are there): succeeded, like v3's `warning`;
/// - `FAILED`: failed (`shutdown`, `JOB_FAILED`); `STOPPED`: failed (`stopped`, `JOB_FAILED`);
///   `INVALID` (bad input or configuration: no input can run): failed (`shutdown`,
///   `ALL_INPUTS_FAILED`, like v3's "All Inputs Failed").
///
/// Unknown values are active (`running`), so that a new status never ends a run by surprise.
///
/// ```
/// use captaindata_poller::api::{classify_v4_status, ErrorCode, RunClass};
/// let partial = classify_v4_status("PARTIAL_SUCCEEDED");
/// assert_eq!((partial.class, partial.v3_status, partial.error), (RunClass::Succeeded, "warning", None));
/// let invalid = classify_v4_status("INVALID");
/// assert_eq!((invalid.class, invalid.error), (RunClass::Failed, Some(ErrorCode::AllInputsFailed)));
/// assert_eq!(classify_v4_status("ARCHIVED").class, RunClass::Active);
/// ```
pub fn classify_v4_status(value: &str) -> V4Status {
    let is = |word: &str| value.eq_ignore_ascii_case(word);
    if is("CREATED") || is("QUEUED") || is("SCHEDULED") {
        status(RunClass::Active, "pending", None)
    } else if is("BLOCKED") {
        status(RunClass::Paused, "paused", None)
    } else if is("SUCCEEDED") {
        status(RunClass::Succeeded, "finished", None)
    } else if is("PARTIAL_SUCCEEDED") {
        status(RunClass::Succeeded, "warning", None)
    } else if is("FAILED") {
        status(RunClass::Failed, "shutdown", Some(ErrorCode::JobFailed))
    } else if is("STOPPED") {
        status(RunClass::Failed, "stopped", Some(ErrorCode::JobFailed))
    } else if is("INVALID") {
        status(
            RunClass::Failed,
            "shutdown",
            Some(ErrorCode::AllInputsFailed),
        )
    } else {
        status(RunClass::Active, "running", None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::classify_status;

    /// Every status v4 documents, with its class, the v3 status served and the final error.
    const DOCUMENTED: [(&str, RunClass, &str, Option<ErrorCode>); 10] = [
        ("CREATED", RunClass::Active, "pending", None),
        (
            "INVALID",
            RunClass::Failed,
            "shutdown",
            Some(ErrorCode::AllInputsFailed),
        ),
        ("QUEUED", RunClass::Active, "pending", None),
        ("SCHEDULED", RunClass::Active, "pending", None),
        ("BLOCKED", RunClass::Paused, "paused", None),
        (
            "STOPPED",
            RunClass::Failed,
            "stopped",
            Some(ErrorCode::JobFailed),
        ),
        ("RUNNING", RunClass::Active, "running", None),
        (
            "FAILED",
            RunClass::Failed,
            "shutdown",
            Some(ErrorCode::JobFailed),
        ),
        ("PARTIAL_SUCCEEDED", RunClass::Succeeded, "warning", None),
        ("SUCCEEDED", RunClass::Succeeded, "finished", None),
    ];

    #[test]
    fn every_documented_status_is_classified() {
        for (name, class, v3_status, error) in DOCUMENTED {
            assert_eq!(
                classify_v4_status(name),
                V4Status {
                    class,
                    v3_status,
                    error
                },
                "{name}"
            );
            let lower = name.to_ascii_lowercase();
            assert_eq!(classify_v4_status(&lower).class, class, "{lower}");
        }
    }

    #[test]
    fn the_v3_status_served_is_classified_by_the_v3_classifier_as_the_v4_one() {
        // A reader's poller classifies what it is served with the v3 classifier: it must reach
        // the same conclusion (a served v4 run neither ends early nor never ends).
        for (name, class, v3_status, _) in DOCUMENTED {
            assert_eq!(
                classify_status(v3_status),
                class,
                "{name} served as {v3_status}"
            );
        }
    }

    #[test]
    fn unknown_statuses_keep_the_run_active() {
        for value in [
            "",
            "ARCHIVED",
            "PARTIAL",
            "SUCCEEDED ",
            "succeeded_partially",
        ] {
            let seen = classify_v4_status(value);
            assert_eq!(
                (seen.class, seen.v3_status, seen.error),
                (RunClass::Active, "running", None),
                "{value:?}"
            );
        }
    }

    #[test]
    fn only_succeeded_and_failed_are_terminal() {
        let names: alloc::vec::Vec<_> = [
            RunClass::Active,
            RunClass::Paused,
            RunClass::Succeeded,
            RunClass::Failed,
        ]
        .iter()
        .map(|c| (c.as_str(), c.is_terminal()))
        .collect();
        assert_eq!(
            names,
            [
                ("active", false),
                ("paused", false),
                ("succeeded", true),
                ("failed", true)
            ]
        );
    }
}
