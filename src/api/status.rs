//! Run status classification (DESIGN §1).

/// What a run status means for the poller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunClass {
    /// `pending`, `running`, or a value we do not know yet: keep polling.
    Active,
    /// `paused` (missing credits, an integration error): not over, may last; keep polling
    /// and say how long it has been paused.
    Paused,
    /// `finished`, `completed` or `warning`: the run is over and its results are final.
    Succeeded,
    /// `shutdown` or `stopped`: the run ended without finishing.
    Failed,
}

impl RunClass {
    /// The name JS sees (`classifyV4Status(status).class`): `"active"`, `"paused"`,
    /// `"succeeded"`, `"failed"`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunClass::Active => "active",
            RunClass::Paused => "paused",
            RunClass::Succeeded => "succeeded",
            RunClass::Failed => "failed",
        }
    }

    /// True for the classes that end a run: [`RunClass::Succeeded`] and [`RunClass::Failed`].
    pub fn is_terminal(self) -> bool {
        matches!(self, RunClass::Succeeded | RunClass::Failed)
    }
}

/// Classifies a run status, case-insensitively. Unknown values are [`RunClass::Active`]
/// so that a new server status never ends a poll by surprise.
///
/// ```
/// use captaindata_poller::api::{classify_status, RunClass};
/// assert_eq!(classify_status("Finished"), RunClass::Succeeded);
/// assert_eq!(classify_status("completed"), RunClass::Succeeded);
/// assert_eq!(classify_status("archived"), RunClass::Active);
/// ```
pub fn classify_status(status: &str) -> RunClass {
    let is = |word: &str| status.eq_ignore_ascii_case(word);
    if is("finished") || is("completed") || is("warning") {
        RunClass::Succeeded
    } else if is("paused") {
        RunClass::Paused
    } else if is("shutdown") || is("stopped") {
        RunClass::Failed
    } else {
        RunClass::Active
    }
}

/// True when `message` says "All Inputs Failed" (any case): no retry can help.
pub fn is_all_inputs_failed(message: &str) -> bool {
    const NEEDLE: &[u8] = b"all inputs failed";
    message
        .as_bytes()
        .windows(NEEDLE.len())
        .any(|w| w.eq_ignore_ascii_case(NEEDLE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_classified_case_insensitively() {
        for s in ["pending", "RUNNING", "", "archived"] {
            assert_eq!(classify_status(s), RunClass::Active, "{s}");
        }
        assert_eq!(classify_status("Paused"), RunClass::Paused);
        for s in ["finished", "Warning", "completed", "COMPLETED"] {
            assert_eq!(classify_status(s), RunClass::Succeeded, "{s}");
        }
        for s in ["shutdown", "STOPPED"] {
            assert_eq!(classify_status(s), RunClass::Failed, "{s}");
        }
    }

    #[test]
    fn all_inputs_failed_is_found_anywhere_in_any_case() {
        assert!(is_all_inputs_failed("All Inputs Failed"));
        assert!(is_all_inputs_failed("Job error: ALL INPUTS FAILED."));
        assert!(!is_all_inputs_failed("some inputs failed"));
        assert!(!is_all_inputs_failed(""));
    }
}
