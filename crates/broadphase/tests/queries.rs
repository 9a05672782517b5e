//! Box queries and ray casts of every registered algorithm against brute force, on lattice
//! boxes where rays run along faces, edges and corners.

use std::ops::ControlFlow;

use broadphase::verify::SplitMix64;
use broadphase::{
    create, Aabb, BroadPhase, CollisionFilter, Error, PairEvents, ProxyId, ProxyKind, Ray, RayHit,
    Vec3, ALGORITHMS,
};
use proptest::prelude::*;

/// Boxes on an integer lattice (sizes 0 to 2), some static, some filtered, some removed.
fn build(seed: u64) -> Vec<(Box<dyn BroadPhase>, Vec<ProxyId>)> {
    let mut rng = SplitMix64::new(seed);
    let mut specs = Vec::new();
    for _ in 0..150 {
        let min = Vec3::new(
            rng.below(10) as f32,
            rng.below(10) as f32,
            rng.below(10) as f32,
        );
        let size = Vec3::new(
            rng.below(3) as f32,
            rng.below(3) as f32,
            rng.below(3) as f32,
        );
        let kind = if rng.chance(0.3) {
            ProxyKind::Static
        } else {
            ProxyKind::Dynamic
        };
        let filter = if rng.chance(0.2) {
            CollisionFilter::new(2, 2)
        } else {
            CollisionFilter::ALL
        };
        specs.push((
            Aabb::new(min, min + size).unwrap(),
            kind,
            filter,
            rng.chance(0.1),
        ));
    }
    ALGORITHMS
        .iter()
        .map(|name| {
            let mut bp = create(name, &Default::default()).unwrap();
            let mut ids = Vec::new();
            for &(aabb, kind, filter, _) in &specs {
                ids.push(bp.insert(aabb, kind, filter).unwrap());
            }
            bp.update(&mut PairEvents::new());
            for (k, spec) in specs.iter().enumerate() {
                if spec.3 {
                    bp.remove(ids[k]).unwrap();
                }
            }
            bp.update(&mut PairEvents::new());
            (bp, ids)
        })
        .collect()
}

fn expected_hits(bp: &dyn BroadPhase, ray: &Ray, filter: CollisionFilter) -> Vec<RayHit> {
    let proxies = bp.proxies();
    let mut hits: Vec<RayHit> = proxies
        .live_slots()
        .filter(|&i| proxies.filter(i).allows(filter))
        .filter_map(|i| {
            ray.hit_distance(proxies.aabb(i)).map(|distance| RayHit {
                id: proxies.id(i),
                distance,
            })
        })
        .collect();
    broadphase::backend::sort_hits(&mut hits);
    hits
}

fn check_ray(
    structures: &[(Box<dyn BroadPhase>, Vec<ProxyId>)],
    ray: &Ray,
    filter: CollisionFilter,
) {
    let mut hits = Vec::new();
    for (bp, _) in structures {
        let expected = expected_hits(bp.as_ref(), ray, filter);
        bp.raycast(ray, filter, &mut hits);
        assert_eq!(hits, expected, "{}: {ray:?}", bp.name());
        assert_eq!(
            bp.raycast_closest(ray, filter),
            expected.first().copied(),
            "{}: {ray:?}",
            bp.name()
        );
        // The closure form stops when asked.
        let mut seen = 0;
        bp.raycast_with(ray, filter, &mut |_| {
            seen += 1;
            ControlFlow::Break(())
        });
        assert_eq!(seen, expected.len().min(1), "{}", bp.name());
    }
}

fn check_box(
    structures: &[(Box<dyn BroadPhase>, Vec<ProxyId>)],
    query: &Aabb,
    filter: CollisionFilter,
) {
    let mut found = Vec::new();
    for (bp, _) in structures {
        let proxies = bp.proxies();
        let expected: Vec<ProxyId> = proxies
            .live_slots()
            .filter(|&i| proxies.filter(i).allows(filter) && proxies.aabb(i).overlaps(query))
            .map(|i| proxies.id(i))
            .collect();
        bp.query_aabb(query, filter, &mut found);
        assert_eq!(found, expected, "{}: {query:?}", bp.name());
        let mut seen = 0;
        bp.query_aabb_with(query, filter, &mut |_| {
            seen += 1;
            ControlFlow::Break(())
        });
        assert_eq!(seen, expected.len().min(1), "{}", bp.name());
    }
}

const DIRECTIONS: [[f32; 3]; 10] = [
    [1.0, 0.0, 0.0],
    [-1.0, 0.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.0, -1.0, 0.0],
    [0.0, 0.0, 1.0],
    [0.0, 0.0, -1.0],
    [1.0, 1.0, 0.0],
    [1.0, 1.0, 1.0],
    [-1.0, 2.0, 0.5],
    [0.0, 0.0, 0.0],
];

#[test]
fn rays_along_axes_through_edges_and_corners_and_from_inside() {
    let structures = build(1);
    for x in -1..12 {
        for y in -1..12 {
            // Origins on lattice points lie on box faces, edges and corners, or inside boxes.
            let origin = Vec3::new(x as f32, y as f32, (x + y) as f32 % 11.0);
            for (k, d) in DIRECTIONS.iter().enumerate() {
                let length =
                    [0.0, 3.0, 20.0, f32::INFINITY][(x + y + k as i32).rem_euclid(4) as usize];
                let ray = Ray::new(origin, Vec3::from_array(*d), length).unwrap();
                check_ray(&structures, &ray, CollisionFilter::ALL);
            }
        }
    }
}

#[test]
fn invalid_rays_are_typed_errors() {
    assert!(matches!(
        Ray::new(Vec3::ZERO, Vec3::new(f32::NAN, 0.0, 0.0), 1.0),
        Err(Error::InvalidRay(_))
    ));
    assert!(matches!(
        Ray::new(Vec3::new(0.0, f32::INFINITY, 0.0), Vec3::X, 1.0),
        Err(Error::InvalidRay(_))
    ));
    assert!(matches!(
        Ray::new(Vec3::ZERO, Vec3::X, -0.5),
        Err(Error::InvalidRay(_))
    ));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn random_rays_and_boxes(
        seed in 0u64..4,
        origin in prop::array::uniform3(-2i32..24),
        direction in 0usize..DIRECTIONS.len() + 1,
        random_direction in prop::array::uniform3(-1.0f32..1.0),
        length in prop_oneof![Just(0.0f32), 0.0f32..30.0, Just(f32::INFINITY)],
        query_min in prop::array::uniform3(-2i32..12),
        query_size in prop::array::uniform3(0i32..6),
        filtered in any::<bool>(),
    ) {
        let structures = build(seed);
        // Half-lattice origins: on faces, edges and corners of the boxes, or inside.
        let origin = Vec3::new(origin[0] as f32, origin[1] as f32, origin[2] as f32) * 0.5;
        let direction = DIRECTIONS.get(direction).map_or(Vec3::from_array(random_direction), |d| Vec3::from_array(*d));
        let filter = if filtered { CollisionFilter::new(2, 2) } else { CollisionFilter::ALL };
        let ray = Ray::new(origin, direction, length).unwrap();
        check_ray(&structures, &ray, filter);
        let min = Vec3::new(query_min[0] as f32, query_min[1] as f32, query_min[2] as f32);
        let size = Vec3::new(query_size[0] as f32, query_size[1] as f32, query_size[2] as f32) * 0.5;
        check_box(&structures, &Aabb::new(min, min + size).unwrap(), filter);
    }
}
