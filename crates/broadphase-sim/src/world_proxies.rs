//! The proxies of a world's objects in one broad phase, kept in step with the world.

use broadphase::{Aabb, BroadPhase, CollisionFilter, ProxyId};

use crate::motion::World;

/// Which proxy stands for which object, in one broad phase: inserts every object, and after
/// each [`World::step`] hands the broad phase what changed (despawned objects removed;
/// respawned, re-kinded and spawned objects inserted anew; moved boxes set).
///
/// ```
/// use broadphase_sim::{Scene, World, WorldProxies};
/// use broadphase::{BroadPhase, PairEvents, SortAndSweep};
/// let mut world = World::new(&Scene { objects: 50, ..Default::default() }).unwrap();
/// let mut bp = SortAndSweep::new();
/// let mut proxies = WorldProxies::insert_all(&world, &mut bp)?;
/// world.step();
/// proxies.sync(&world, &mut bp)?;
/// bp.update(&mut PairEvents::new());
/// assert_eq!(bp.len(), 50);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Debug, Default, Clone)]
pub struct WorldProxies {
    /// Per object: its proxy, `None` while despawned.
    ids: Vec<Option<ProxyId>>,
    /// Per proxy slot: the object (meaningful for live proxies).
    objects: Vec<u32>,
    /// This step's moves, handed to the broad phase as one batch (reused).
    moves: Vec<(ProxyId, Aabb)>,
}

impl WorldProxies {
    /// Inserts a proxy for every object of `world` into `bp`.
    pub fn insert_all(world: &World, bp: &mut dyn BroadPhase) -> broadphase::Result<Self> {
        let mut proxies = Self::default();
        for i in 0..world.len() {
            if world.is_alive(i) {
                proxies.insert(world, bp, i)?;
            }
        }
        Ok(proxies)
    }

    fn insert(
        &mut self,
        world: &World,
        bp: &mut dyn BroadPhase,
        i: usize,
    ) -> broadphase::Result<()> {
        if self.ids.len() <= i {
            self.ids.resize(i + 1, None);
        }
        if let Some(old) = self.ids[i].take() {
            bp.remove(old)?;
        }
        let id = bp.insert(world.aabbs()[i], world.kind(i), CollisionFilter::ALL)?;
        let slot = id.index() as usize;
        if self.objects.len() <= slot {
            self.objects.resize(slot + 1, u32::MAX);
        }
        self.objects[slot] = i as u32;
        self.ids[i] = Some(id);
        Ok(())
    }

    /// Hands `bp` the changes of the world's last step. O(changed objects).
    pub fn sync(&mut self, world: &World, bp: &mut dyn BroadPhase) -> broadphase::Result<()> {
        for &i in world.despawned() {
            if let Some(id) = self.ids.get_mut(i as usize).and_then(Option::take) {
                bp.remove(id)?;
            }
        }
        for &i in world
            .respawned()
            .iter()
            .chain(world.kind_changed())
            .chain(world.spawned())
        {
            self.insert(world, bp, i as usize)?;
        }
        self.moves.clear();
        for &i in world.moving() {
            if let Some(id) = self.ids[i as usize] {
                self.moves.push((id, world.aabbs()[i as usize]));
            }
        }
        bp.set_aabbs(&self.moves)
    }

    /// The proxy of object `i`, if it is in the world.
    pub fn id(&self, i: usize) -> Option<ProxyId> {
        self.ids.get(i).copied().flatten()
    }

    /// The object of a live proxy.
    pub fn object(&self, id: ProxyId) -> u32 {
        self.objects[id.index() as usize]
    }
}
