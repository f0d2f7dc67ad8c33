//! Tests of the session path's trial (no runtime needed: durations are given).

use super::*;

/// Runs `after` eager calls taking `eager` ns each (the first `slow_first` ns, as a first call
/// that instantiates the function), then `TRIAL_CALLS` session calls taking `session` ns each;
/// returns the tier and the trial's verdict.
fn trial(after: u32, slow_first: u64, eager: u64, session: u64) -> (SessionTier, Option<Verdict>) {
    let tier = SessionTier::new(false, after);
    for i in 0..after {
        if tier.times_eager() {
            tier.eager_took(if i == 0 { slow_first } else { eager });
        }
        assert_eq!(tier.count_call(), i + 1 == after, "call {i}: only the last one promotes");
    }
    let mut verdict = None;
    for i in 0..TRIAL_CALLS {
        assert!(tier.times_session(), "session call {i} is timed");
        let v = tier.session_took(session);
        assert_eq!(v.is_some(), i + 1 == TRIAL_CALLS, "only the call that ends the trial decides");
        verdict = verdict.or(v);
    }
    assert!(!tier.times_session(), "the trial is over");
    (tier, verdict)
}

#[test]
fn a_faster_session_is_kept_and_a_slower_one_retired() {
    let (tier, v) = trial(64, 9_000_000, 17_000, 4_000);
    assert_eq!(v, Some(Verdict { kept: true, eager_nanos: 17_000, session_nanos: 4_000 }));
    assert!(!tier.retired.load(Ordering::Relaxed));
    // ew20: the thread pool ran 20 element-wise ops side by side, the session one after another.
    let (tier, v) = trial(64, 9_000_000, 3_959_000, 5_641_000);
    assert_eq!(v, Some(Verdict { kept: false, eager_nanos: 3_959_000, session_nanos: 5_641_000 }));
    assert!(tier.retired.load(Ordering::Relaxed));
    assert!(!tier.is_ready() && tier.ready().is_none(), "a retired tier gives no session");
    // Equal: kept (no reason to leave).
    assert!(trial(64, 1, 5_000, 5_000).1.unwrap().kept);
}

#[test]
fn only_the_last_eager_calls_before_promotion_are_timed() {
    let tier = SessionTier::new(false, 64);
    let mut timed = 0;
    for _ in 0..64 {
        timed += u32::from(tier.times_eager());
        tier.count_call();
    }
    assert_eq!(timed, TRIAL_CALLS);
    assert!(!tier.times_eager(), "promoted: nothing more is counted or timed");
    // With fewer calls than the trial, every one is timed, the first (slow) one too; when the
    // first is the only one, the session is kept.
    let (_, v) = trial(1, 9_000_000, 0, 50_000);
    assert!(v.unwrap().kept);
    let (_, v) = trial(2, 9_000_000, 17_000, 50_000);
    assert!(!v.unwrap().kept, "the second call shows the eager path's speed");
    // A blocked tier counts and times nothing.
    let blocked = SessionTier::new(true, 64);
    assert!(!blocked.times_eager() && !blocked.count_call());
}

/// A slot is built by one caller, after a call that succeeded: a failed call gives its claim
/// back, so a later call of a thread mapped to the slot builds it (before, the slot stayed
/// claimed and empty, and its threads kept to the first session's locks for good).
#[test]
fn a_failed_call_gives_back_its_claim_to_build_the_threads_session() {
    let slot = Slot::default();
    assert!(slot.claim(), "the first caller builds");
    assert!(!slot.claim(), "and only it");
    slot.unclaim(); // what Chosen::give_back_claim does after a failed call
    assert!(slot.claim(), "a later call builds it");
}
