//! The measured quantities, named once: every output (the `bench` table and JSON, the `sweep`
//! CSV, charts and summary) takes its column names from here, so that one quantity has one
//! name everywhere. They are the six quantities of [Zych16, ch. 4.1] plus memory; see
//! `docs/outputs.md`.

/// A measured quantity: its key (JSON field stem, CSV column, chart file stem), the short
/// header of the `bench` table, and the description used for chart axes and documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantity {
    /// Field stem, CSV column and chart file stem, e.g. `update_ms`.
    pub key: &'static str,
    /// Column header of the `bench` table, e.g. `update ms`.
    pub header: &'static str,
    /// What it is, for chart axes and docs.
    pub description: &'static str,
}

/// Handing one step's new boxes to the broad phase (`set_aabbs`, inserts and removals of
/// churn): the "update AABB" time of [Zych16, ch. 4.1].
pub const SET_AABBS: Quantity = Quantity {
    key: "set_aabbs_ms",
    header: "set_aabbs ms",
    description: "hand boxes over (set_aabbs) ms per step",
};

/// `BroadPhase::update`: structure maintenance and pair finding, the broad phase proper.
pub const UPDATE: Quantity = Quantity {
    key: "update_ms",
    header: "update ms",
    description: "broad phase (update) ms per step",
};

/// The exact shape tests of the reported pairs.
pub const NARROW: Quantity = Quantity {
    key: "narrow_ms",
    header: "narrow ms",
    description: "narrow phase ms per step",
};

/// The sum of the three times above.
pub const TOTAL: Quantity = Quantity {
    key: "total_ms",
    header: "total ms",
    description: "total ms per step",
};

/// Pairs the broad phase reported per step ("possible collisions").
pub const POSSIBLE_PAIRS: Quantity = Quantity {
    key: "possible_pairs",
    header: "possible",
    description: "possible collisions (broad-phase pairs) per step",
};

/// Pairs whose shapes intersect per step ("actual collisions").
pub const ACTUAL_COLLISIONS: Quantity = Quantity {
    key: "actual_collisions",
    header: "actual",
    description: "actual collisions (intersecting shapes) per step",
};

/// Heap bytes of the broad phase per proxy.
pub const BYTES_PER_PROXY: Quantity = Quantity {
    key: "bytes_per_proxy",
    header: "B/proxy",
    description: "heap bytes per proxy",
};

/// Every quantity, in output order.
#[cfg(test)]
pub const ALL: [Quantity; 7] = [
    SET_AABBS,
    UPDATE,
    NARROW,
    TOTAL,
    POSSIBLE_PAIRS,
    ACTUAL_COLLISIONS,
    BYTES_PER_PROXY,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every output names each quantity by its key: the sweep CSV's columns, and the bench
    /// JSON's fields (`KEY_median` for times, `KEY_mean` for counts).
    #[test]
    fn every_output_uses_the_keys() {
        let columns: Vec<&str> = crate::sweep::CSV_HEADER.split(',').collect();
        let row = serde_json::to_value(crate::bench::BenchRow::default()).unwrap();
        for q in ALL {
            let json_key = match q.key {
                k if k.ends_with("_ms") => format!("{k}_median"),
                "bytes_per_proxy" => q.key.to_string(),
                k => format!("{k}_mean"),
            };
            assert!(row.get(&json_key).is_some(), "bench JSON lacks {json_key}");
            if q.key != "bytes_per_proxy" {
                assert!(columns.contains(&q.key), "sweep CSV lacks {}", q.key);
            }
        }
    }

    #[test]
    fn keys_and_headers_are_unique() {
        for (i, a) in ALL.iter().enumerate() {
            for b in &ALL[i + 1..] {
                assert_ne!(a.key, b.key);
                assert_ne!(a.header, b.header);
            }
        }
    }
}
