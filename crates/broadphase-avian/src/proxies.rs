//! The library broad phase behind the plugin: one proxy per collider entity, keyed by
//! `Entity::to_bits()`.

use bevy::prelude::Entity;
use broadphase::{Aabb, BroadPhase, CollisionFilter, PairEvents, ProxyId, ProxyKind, Result};

/// What the broad phase holds for one collider entity, indexed by the entity's index.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tracked {
    /// The entity (index and generation): a different generation at the same index is a
    /// different, new collider.
    pub entity: Entity,
    /// The proxy, `None` while the collider is left out (its box is not finite).
    pub proxy: Option<Proxy>,
    /// The collider's box was not finite and the warning was given; reset once it is finite.
    pub warned: bool,
}

/// A proxy and the inputs it was last given, to skip calls that change nothing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Proxy {
    pub id: ProxyId,
    pub aabb: Aabb,
    pub kind: ProxyKind,
    pub filter: CollisionFilter,
}

/// The chosen algorithm and the per-entity table.
pub(crate) struct Proxies {
    broad_phase: Box<dyn BroadPhase>,
    /// Indexed by `Entity::index()`.
    tracked: Vec<Option<Tracked>>,
    events: PairEvents,
}

impl Proxies {
    pub fn new(broad_phase: Box<dyn BroadPhase>) -> Self {
        Self {
            broad_phase,
            tracked: Vec::new(),
            events: PairEvents::new(),
        }
    }

    pub fn name(&self) -> &'static str {
        self.broad_phase.name()
    }

    pub fn len(&self) -> usize {
        self.broad_phase.len()
    }

    /// The slot of `entity`, emptied first when it held an older entity with the same index
    /// (that one was despawned: its proxy goes without events).
    pub fn slot(&mut self, entity: Entity) -> &mut Option<Tracked> {
        let index = entity.index_u32() as usize;
        if index >= self.tracked.len() {
            self.tracked.resize(index + 1, None);
        }
        if let Some(old) = self.tracked[index] {
            if old.entity != entity {
                if let Some(proxy) = old.proxy {
                    let _ = self.broad_phase.remove_without_events(proxy.id);
                }
                self.tracked[index] = None;
            }
        }
        &mut self.tracked[index]
    }

    /// The proxy of `entity`, if it has one.
    pub fn proxy_of(&self, entity: Entity) -> Option<ProxyId> {
        let tracked = self.tracked.get(entity.index_u32() as usize)?.as_ref()?;
        (tracked.entity == entity).then_some(tracked.proxy?.id)
    }

    /// Inserts the proxy of `entity`.
    pub fn insert(
        &mut self,
        entity: Entity,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
    ) -> Result<Proxy> {
        let id = self
            .broad_phase
            .insert_keyed(aabb, kind, filter, entity.to_bits())?;
        Ok(Proxy {
            id,
            aabb,
            kind,
            filter,
        })
    }

    /// Brings `proxy` to the given inputs, calling the library only for what changed.
    pub fn refresh(
        &mut self,
        proxy: &mut Proxy,
        aabb: Aabb,
        kind: ProxyKind,
        filter: CollisionFilter,
    ) -> Result<()> {
        if proxy.aabb != aabb {
            self.broad_phase.set_aabb(proxy.id, aabb)?;
            proxy.aabb = aabb;
        }
        if proxy.kind != kind {
            self.broad_phase.set_kind(proxy.id, kind)?;
            proxy.kind = kind;
        }
        if proxy.filter != filter {
            self.broad_phase.set_filter(proxy.id, filter)?;
            proxy.filter = filter;
        }
        Ok(())
    }

    /// Gives the proxy of `entity` the box `aabb` if it has one of kind `kind`, and tells
    /// whether the box changed; `None` (and nothing changed) when `entity` has no proxy or one
    /// of another kind.
    pub fn move_tracked(&mut self, entity: Entity, aabb: Aabb, kind: ProxyKind) -> Option<bool> {
        let tracked = self
            .tracked
            .get_mut(entity.index_u32() as usize)?
            .as_mut()?;
        let proxy = tracked.proxy.as_mut()?;
        if tracked.entity != entity || proxy.kind != kind {
            return None;
        }
        if proxy.aabb == aabb {
            return Some(false);
        }
        self.broad_phase.set_aabb(proxy.id, aabb).ok()?;
        proxy.aabb = aabb;
        Some(true)
    }

    /// Removes a proxy without reporting its pairs as ended: avian's narrow phase drops the
    /// contacts of removed and disabled colliders itself.
    pub fn remove(&mut self, id: ProxyId) {
        let _ = self.broad_phase.remove_without_events(id);
    }

    /// Asks for every current pair of `entity` to be listed as begun again at the next update.
    pub fn report_again(&mut self, entity: Entity) {
        if let Some(id) = self.proxy_of(entity) {
            let _ = self.broad_phase.report_pairs_again(id);
        }
    }

    /// Updates the pair set; the begun and ended pairs, as entity pairs, are in
    /// [`Proxies::begun`] and [`Proxies::ended`] until the next update.
    pub fn update(&mut self) {
        self.broad_phase.update(&mut self.events);
    }

    /// The pairs that began (or were asked for again) at the last update.
    pub fn begun(&self) -> impl Iterator<Item = (Entity, Entity)> + '_ {
        self.events
            .begun
            .iter()
            .map(|pair| (Entity::from_bits(pair.key_a), Entity::from_bits(pair.key_b)))
    }

    /// The pairs that ended at the last update.
    pub fn ended(&self) -> impl Iterator<Item = (Entity, Entity)> + '_ {
        self.events
            .ended
            .iter()
            .map(|pair| (Entity::from_bits(pair.key_a), Entity::from_bits(pair.key_b)))
    }

    /// Every current pair, as entity pairs (for tests and diagnostics).
    pub fn pairs(&self) -> Vec<(Entity, Entity)> {
        let mut pairs = Vec::new();
        self.broad_phase.pairs(&mut pairs);
        pairs
            .iter()
            .map(|pair| (Entity::from_bits(pair.key_a), Entity::from_bits(pair.key_b)))
            .collect()
    }
}
