//! Trial rounds: starting one, running its trials one per step, and acting on the results
//! (switching, benching, scheduling the next), with the decisions taken by [`super::policy`];
//! and the probation of a switch.

use super::policy::{self, Best, TrialResult, HOPELESS};
use super::{Adaptive, SwitchPolicy, SwitchRecord, RECENT_STEPS};

/// A switch on trial: if the new algorithm runs slower than the one it replaced did, the
/// switch is undone, and the new one's trials are corrected by what it really cost.
pub(super) struct Probation {
    previous: &'static str,
    /// The replaced algorithm's running cost before the switch, seconds per step.
    previous_cost: f64,
    /// The new algorithm's trial time that won the switch.
    expected: f64,
    /// The step at which the new algorithm's running cost is judged.
    pub(super) until: u64,
}

impl Adaptive {
    /// The factor from `name`'s trial time to its running cost. An algorithm not yet seen
    /// running is assumed to scale from its trial (a small sample, in cache) to the whole
    /// scene at least as badly as the worst one seen so far: a switch bets a full build on it.
    fn correction(&self, name: &str) -> f64 {
        match self.corrections.iter().find(|(n, _)| *n == name) {
            Some(c) => c.1,
            None => self.corrections.iter().map(|c| c.1).fold(1.0, f64::max),
        }
    }

    /// The median of the active algorithm's recent update times, once there are enough.
    pub(super) fn running_cost(&self) -> Option<f64> {
        if self.recent.len() < 5 {
            return None;
        }
        let mut sorted = self.recent.clone();
        sorted.sort_by(f64::total_cmp);
        Some(sorted[sorted.len() / 2])
    }

    /// Judges the last switch by the new algorithm's running cost: learns its correction, and
    /// goes back when it runs slower than the replaced algorithm did.
    pub(super) fn end_probation(&mut self) {
        let (Some(probation), Some(running)) = (self.probation.take(), self.running_cost()) else {
            return;
        };
        let name = self.active_name();
        let factor =
            (self.correction(name) * running / probation.expected.max(1e-9)).clamp(0.1, 64.0);
        match self.corrections.iter_mut().find(|(n, _)| *n == name) {
            Some(c) => c.1 = factor,
            None => self.corrections.push((name, factor)),
        }
        if running <= probation.previous_cost {
            // Better than before, but slower than its trial promised: with that learnt,
            // the others may now look better; retry them at once.
            if running > 1.25 * probation.expected {
                self.next_trial = self.step;
            }
            return;
        }
        let load_start = self.clock.seconds();
        let previous = self.load(probation.previous);
        // Going back is part of what choosing costs.
        let load_seconds = self.clock.seconds() - load_start;
        self.trial_seconds += load_seconds;
        if let Some(inner) = previous {
            self.log.push(SwitchRecord {
                step: self.step,
                from: name,
                to: probation.previous,
                reason: format!(
                    "probation: {name} ran {:.3} ms per step (trial: {:.3} ms), {} had run {:.3} ms; loaded in {:.1} ms",
                    running * 1e3,
                    probation.expected * 1e3,
                    probation.previous,
                    probation.previous_cost * 1e3,
                    load_seconds * 1e3
                ),
            });
            self.active = inner;
            self.recent.clear();
            self.recent_next = 0;
            self.unconfirmed = None;
        }
    }

    /// Starts a trial round: the candidates to try, one per step, the active one included.
    pub(super) fn start_round(&mut self) {
        let n = self.table().len();
        let active = self.active_name();
        let previous = std::mem::take(&mut self.results);
        self.best = None;
        self.pending.clear();
        match self.options.policy {
            // A confirming round retries only the two contenders.
            SwitchPolicy::Measured if self.unconfirmed.is_some() => {
                self.pending.push(active);
                self.pending.extend(self.unconfirmed);
            }
            SwitchPolicy::Measured => policy::measured_round(
                &self.candidates,
                active,
                n,
                self.options.quadratic_limit,
                &mut self.benched,
                &previous,
                &mut self.pending,
            ),
            SwitchPolicy::RoundRobin => {
                self.pending
                    .extend(policy::round_robin_next(&self.candidates, active));
            }
        }
        self.stats_at_trial = self.stats;
        self.sample = self.trial_sample();
    }

    /// Runs the next trial of the round; after the last one, switches if a candidate won.
    pub(super) fn continue_round(&mut self) {
        let start = self.clock.seconds();
        if let Some(name) = self.pending.pop() {
            // A candidate already HOPELESS times slower than the round's best stops after one
            // timed step (the active one always runs in full: its trial calibrates).
            let give_up = match self.results.iter().map(|r| r.seconds).reduce(f64::min) {
                Some(best) if name != self.active_name() => HOPELESS * best / self.correction(name),
                _ => f64::INFINITY,
            };
            if let Some(time) = self.trial(name, &self.sample, give_up) {
                let is_active = name == self.active_name();
                if is_active {
                    self.active_trial = Some(time.step_seconds);
                }
                let seconds = time.step_seconds * self.correction(name);
                self.results.push(TrialResult { name, seconds });
                if !is_active && self.best.is_none_or(|b| seconds < b.seconds) {
                    self.best = Some(Best {
                        name,
                        seconds,
                        build_seconds: time.build_seconds,
                    });
                }
            }
        }
        let last = self.pending.is_empty();
        if last {
            self.finish_round();
        }
        self.trial_seconds += self.clock.seconds() - start;
    }

    fn finish_round(&mut self) {
        let active_name = self.active_name();
        // The active algorithm is judged by what it really costs, and that teaches how far
        // its trials are off.
        if let (Some(trial), Some(running)) = (self.active_trial.take(), self.running_cost()) {
            let factor = (running / trial.max(1e-9)).clamp(0.1, 64.0);
            match self.corrections.iter_mut().find(|(n, _)| *n == active_name) {
                Some(c) => c.1 = factor,
                None => self.corrections.push((active_name, factor)),
            }
            if let Some(r) = self.results.iter_mut().find(|r| r.name == active_name) {
                r.seconds = running;
            }
        }
        policy::update_benched(&mut self.benched, &self.results, active_name);
        self.last_round = self.step;
        let active_time = match self.options.policy {
            SwitchPolicy::Measured => self
                .results
                .iter()
                .find(|r| r.name == active_name)
                .map(|r| r.seconds),
            SwitchPolicy::RoundRobin => Some(f64::INFINITY),
        };
        let summary: Vec<String> = self
            .results
            .iter()
            .map(|r| format!("{} {:.3} ms", r.name, r.seconds * 1e3))
            .collect();
        let best = self.best.take();
        let candidate = policy::winner(best, active_time, self.options.switch_margin);
        let (confirmed, unconfirmed) =
            policy::confirm(self.options.policy, candidate, self.unconfirmed);
        self.unconfirmed = unconfirmed;
        let load_start = self.clock.seconds();
        let winner = confirmed.and_then(|name| self.load(name));
        let load_ms = (self.clock.seconds() - load_start) * 1e3;
        let switched = match winner {
            Some(inner) => {
                let to = inner.name();
                self.log.push(SwitchRecord {
                    step: self.step,
                    from: active_name,
                    to,
                    reason: format!(
                        "n = {}, moving {:.0}%, speed/size {:.3}, churn {:.1}%, pairs/proxy {:.2}; trials: {}; loaded in {load_ms:.1} ms",
                        self.stats.proxies,
                        self.stats.moved_fraction * 100.0,
                        self.stats.relative_speed,
                        self.stats.churn * 100.0,
                        self.stats.pairs_per_proxy,
                        summary.join(", ")
                    ),
                });
                if self.options.policy == SwitchPolicy::Measured {
                    self.probation = match (self.running_cost(), best) {
                        (Some(before), Some(best)) => Some(Probation {
                            previous: active_name,
                            previous_cost: before,
                            expected: best.seconds,
                            until: self.step + RECENT_STEPS as u64,
                        }),
                        _ => None,
                    };
                }
                self.active = inner;
                self.recent.clear();
                self.recent_next = 0;
                true
            }
            None => false,
        };
        (self.trial_interval, self.next_trial) = policy::next_round(&policy::Schedule {
            policy: self.options.policy,
            step: self.step,
            interval: self.trial_interval,
            min_interval: self.options.min_trial_interval,
            max_interval: self.options.max_trial_interval,
            switched,
            unconfirmed: self.unconfirmed.is_some(),
            trial_seconds: self.trial_seconds,
            step_seconds: self.step_seconds,
            trial_budget: self.options.trial_budget,
        });
    }
}
