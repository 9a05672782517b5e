//! Every call into PhysX, through physx-sys: the process-wide foundation and an owned
//! standalone broad phase ([`RawBroadPhase`]) whose safe methods check what PhysX would
//! otherwise trust (array lengths, handle ranges, the created/updated/removed protocol).
//!
//! The FFI surface: `phys_PxCreateFoundation` (with an allocator and an error callback of
//! ours, made by physx-sys's `create_alloc_callback` and `create_error_callback`),
//! `PxBroadPhaseDesc_new`,
//! `phys_PxCreateBroadPhase`, `PxBroadPhase_release_mut`, `PxBroadPhase_update_mut` +
//! `PxBroadPhase_fetchResults_mut` (what `PxBroadPhase::update(results, data)`, physx-sys's
//! `PxBroadPhase_update_mut_1`, does in one call; split here so that MBP's out-of-bounds list
//! can be read before `fetchResults` clears it), `PxBroadPhaseUpdateData_new`,
//! `PxBroadPhaseResults_new`, `phys_PxGetBroadPhaseStaticFilterGroup`,
//! `phys_PxGetBroadPhaseDynamicFilterGroup`, `PxBroadPhase_getRegions_mut`,
//! `PxBroadPhaseRegions_addRegion_mut` and `PxBroadPhaseRegions_getNbOutOfBoundsObjects`.

use std::alloc::Layout;
use std::cell::Cell;
use std::ffi::{c_void, CStr};
use std::io::Write;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use physx_sys as px;

pub(super) use px::{PxBounds3, PxBroadPhasePair, PxBroadPhaseType, PxVec3};

/// `PX_PHYSICS_VERSION` of the PhysX that physx-sys 0.11 vendors (5.1.3).
const PHYSX_VERSION: u32 = px::version(5, 1, 3);

/// Messages PhysX sent to the error callback since the process started.
static ERRORS: AtomicU64 = AtomicU64::new(0);

/// The number of messages (errors and warnings) PhysX has reported in this process.
pub(super) fn error_count() -> u64 {
    ERRORS.load(Ordering::Relaxed)
}

/// PhysX's error callback: counts the message and prints it to stderr. Never unwinds
/// (an unwind out of an `extern "C"` function aborts), so it writes with `writeln!` and
/// ignores write errors instead of `eprintln!`.
unsafe extern "C" fn report_error(
    code: px::PxErrorCode,
    message: *const i8,
    file: *const i8,
    line: u32,
    _user_data: *const c_void,
) {
    ERRORS.fetch_add(1, Ordering::Relaxed);
    let text = |p: *const i8| {
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: PhysX passes NUL-terminated strings (a message and a source file
            // name) that stay valid for the duration of the callback; null is handled above.
            unsafe { CStr::from_ptr(p.cast()) }
                .to_string_lossy()
                .into_owned()
        }
    };
    let _ = writeln!(
        std::io::stderr(),
        "PhysX {code:?}: {} ({}:{line})",
        text(message),
        text(file)
    );
}

/// Bytes PhysX holds that no broad phase of ours was being called when it allocated them
/// (the foundation's own).
static UNATTRIBUTED_BYTES: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The heap counter of the broad phase this thread is calling into PhysX for; null
    /// outside such calls.
    static CURRENT_HEAP: Cell<*const AtomicUsize> = const { Cell::new(ptr::null()) };
}

/// Attributes PhysX's allocations on this thread to `heap` while it lives.
struct HeapScope {
    previous: *const AtomicUsize,
}

impl HeapScope {
    fn enter(heap: &Arc<AtomicUsize>) -> Self {
        let previous = CURRENT_HEAP.with(|current| current.replace(Arc::as_ptr(heap)));
        Self { previous }
    }
}

impl Drop for HeapScope {
    fn drop(&mut self) {
        CURRENT_HEAP.with(|current| current.set(self.previous));
    }
}

/// PhysX wants 16-byte aligned blocks; each block is preceded by a 16-byte header holding
/// the counter it was charged to and its size.
const HEADER: usize = 16;

/// PhysX's allocator: `std::alloc` with a header, charging the block to the broad phase
/// being called (its counter is kept alive by one strong count per block). Never unwinds.
unsafe extern "C" fn allocate(
    size: u64,
    _type_name: *const c_void,
    _file: *const c_void,
    _line: u32,
    _user_data: *const c_void,
) -> *mut c_void {
    let Some(layout) = usize::try_from(size)
        .ok()
        .and_then(|size| size.checked_add(HEADER))
        .and_then(|total| Layout::from_size_align(total, HEADER).ok())
    else {
        return ptr::null_mut();
    };
    let size = layout.size() - HEADER;
    let heap = CURRENT_HEAP.try_with(Cell::get).unwrap_or(ptr::null());
    // SAFETY: `layout` has a non-zero size (at least the header). The header's two words fit
    // in its first 16 bytes, which are 16-aligned. A non-null `heap` is the counter of an
    // `Arc` that a live `HeapScope` borrows, so adding a strong count is sound; the block
    // then keeps the counter alive until `deallocate` gives the count back.
    unsafe {
        let block = std::alloc::alloc(layout);
        if block.is_null() {
            return ptr::null_mut();
        }
        if heap.is_null() {
            UNATTRIBUTED_BYTES.fetch_add(size, Ordering::Relaxed);
        } else {
            Arc::increment_strong_count(heap);
            (*heap).fetch_add(size, Ordering::Relaxed);
        }
        block.cast::<*const AtomicUsize>().write(heap);
        block.add(8).cast::<usize>().write(size);
        block.add(HEADER).cast()
    }
}

/// PhysX's deallocator, the inverse of [`allocate`]. Never unwinds.
unsafe extern "C" fn deallocate(pointer: *const c_void, _user_data: *const c_void) {
    if pointer.is_null() {
        return;
    }
    // SAFETY: PhysX frees only blocks that `allocate` returned, each once: the header
    // before it holds the counter (null or one strong count of an `Arc<AtomicUsize>`, given
    // back here) and the size, from which the layout of the allocation is rebuilt.
    unsafe {
        let block = pointer.cast::<u8>().cast_mut().sub(HEADER);
        let heap = block.cast::<*const AtomicUsize>().read();
        let size = block.add(8).cast::<usize>().read();
        if heap.is_null() {
            UNATTRIBUTED_BYTES.fetch_sub(size, Ordering::Relaxed);
        } else {
            (*heap).fetch_sub(size, Ordering::Relaxed);
            Arc::decrement_strong_count(heap);
        }
        std::alloc::dealloc(
            block,
            Layout::from_size_align_unchecked(size + HEADER, HEADER),
        );
    }
}

/// Creates the PhysX foundation once per process (PhysX allows one); `false` when PhysX
/// refused (another foundation already exists in this process, or the version mismatched).
fn foundation_ready() -> bool {
    static FOUNDATION: OnceLock<bool> = OnceLock::new();
    *FOUNDATION.get_or_init(|| {
        // SAFETY: `create_alloc_callback` and `create_error_callback` heap-allocate C++
        // trampolines that call `allocate`/`deallocate` and `report_error`, functions valid
        // for the whole process, with a null user pointer they never read. Both objects must
        // outlive the foundation: they are never freed, and the foundation is never released
        // (it lives until the process ends). `OnceLock` makes this the only call of
        // `phys_PxCreateFoundation` from this crate.
        unsafe {
            let allocator = px::create_alloc_callback(allocate, deallocate, ptr::null_mut());
            let errors = px::create_error_callback(report_error, ptr::null_mut());
            !px::phys_PxCreateFoundation(PHYSX_VERSION, allocator, errors).is_null()
        }
    })
}

/// The filter group PhysX gives static objects: pairs of two statics are never reported.
pub(super) fn static_group() -> u32 {
    // SAFETY: a pure function of no arguments (returns a constant of the Bp layer).
    unsafe { px::phys_PxGetBroadPhaseStaticFilterGroup() }
}

/// The filter group of a dynamic object with its own `id` (objects of the same id are not
/// paired, so every slot gets its own). PhysX encodes `(id + 1) << 2`, so `id < 2^30 - 1`.
pub(super) fn dynamic_group(id: u32) -> u32 {
    debug_assert!(id < MAX_HANDLES);
    // SAFETY: a pure function of its argument.
    unsafe { px::phys_PxGetBroadPhaseDynamicFilterGroup(id) }
}

/// Handles (and dynamic ids) must stay below this so that PhysX's group encoding
/// `(id + 1) << 2` fits in 32 bits; kept well below it.
pub(super) const MAX_HANDLES: u32 = 1 << 29;

/// The created, updated and removed handles of one update and the per-handle arrays,
/// borrowed for the call. PhysX reads `bounds`, `groups` and `distances` by handle.
pub(super) struct UpdateData<'a> {
    pub created: &'a [u32],
    pub updated: &'a [u32],
    pub removed: &'a [u32],
    pub bounds: &'a [PxBounds3],
    pub groups: &'a [u32],
    pub distances: &'a [f32],
}

/// What one update reported: PhysX's found and lost pairs (by handle), valid until the
/// next call on the broad phase, and MBP's count of objects outside every region.
pub(super) struct UpdateResults<'a> {
    pub created: &'a [PxBroadPhasePair],
    pub deleted: &'a [PxBroadPhasePair],
    pub out_of_bounds: u32,
}

/// An owned PhysX standalone broad phase (`PxBroadPhase`), released on drop.
///
/// Keeps which handles PhysX holds, so that [`RawBroadPhase::update`] can refuse (panic on)
/// calls that PhysX would not check in release builds: a handle created twice, updated or
/// removed while absent, listed twice or out of order, or beyond the arrays.
pub(super) struct RawBroadPhase {
    bp: NonNull<px::PxBroadPhase>,
    kind: PxBroadPhaseType,
    results: px::PxBroadPhaseResults,
    /// `present[h]`: PhysX holds handle `h`.
    present: Vec<bool>,
    /// Bytes PhysX holds for this broad phase (allocated while calling into it).
    heap: Arc<AtomicUsize>,
}

// SAFETY: `RawBroadPhase` owns its PhysX broad phase exclusively (nothing else holds the
// pointer) and every method that calls into PhysX takes `&mut self`, so one thread at a time
// uses the object; PhysX's broad phases keep no thread-affine state (no thread-local
// storage, no OS handles tied to a thread; their memory comes from the foundation's
// allocator, physx-sys's malloc-based `PxDefaultAllocator`, which any thread may call), so
// moving the owner to another thread is sound.
unsafe impl Send for RawBroadPhase {}
// SAFETY: no method takes `&self` and calls into PhysX or reads the pointed-to object (the
// `&self` methods read only the Rust-side `present` bitmap and the kind), so sharing `&RawBroadPhase`
// between threads gives no concurrent access to the PhysX object.
unsafe impl Sync for RawBroadPhase {}

impl RawBroadPhase {
    /// Creates a CPU broad phase of `kind` (not `eGPU`) after making sure the foundation
    /// exists; `None` when PhysX refused.
    pub fn new(kind: PxBroadPhaseType) -> Option<Self> {
        assert!(
            matches!(
                kind,
                PxBroadPhaseType::Sap
                    | PxBroadPhaseType::Mbp
                    | PxBroadPhaseType::Abp
                    | PxBroadPhaseType::Pabp
            ),
            "only the CPU broad phases are supported"
        );
        if !foundation_ready() {
            return None;
        }
        let heap = Arc::new(AtomicUsize::new(0));
        let _scope = HeapScope::enter(&heap);
        // SAFETY: the foundation exists (checked above), which `PxCreateBroadPhase` needs
        // for its allocations; the descriptor is a valid value made by its constructor and
        // is only read during the call; the result is null or a new object we now own.
        let bp = unsafe {
            let desc = px::PxBroadPhaseDesc_new(kind);
            px::phys_PxCreateBroadPhase(&desc)
        };
        // SAFETY: a plain constructor of a struct of counts and null pointers.
        let results = unsafe { px::PxBroadPhaseResults_new() };
        NonNull::new(bp).map(|bp| Self {
            bp,
            kind,
            results,
            present: Vec::new(),
            heap: heap.clone(),
        })
    }

    /// Bytes of heap memory PhysX holds for this broad phase.
    pub fn heap_bytes(&self) -> usize {
        self.heap.load(Ordering::Relaxed)
    }

    /// True when PhysX holds handle `h`.
    pub fn is_present(&self, h: u32) -> bool {
        self.present.get(h as usize).copied().unwrap_or(false)
    }

    /// Adds an MBP region (before any object is created, so no population pass reads the
    /// bounds). Returns `false` when this is not MBP or PhysX refused (more than 256 regions).
    pub fn add_region(&mut self, bounds: PxBounds3) -> bool {
        let region = px::PxBroadPhaseRegion {
            mBounds: bounds,
            mUserData: ptr::null_mut(),
        };
        let _scope = HeapScope::enter(&self.heap);
        // SAFETY: `self.bp` is a live broad phase we own (released only in `drop`), used
        // through `&mut self`. `getRegions` returns null for non-MBP broad phases (checked),
        // else an interface of the same object, valid while it lives. `addRegion` copies
        // `region` during the call; with `populateRegion = false` it reads neither the bounds
        // nor the distances array, so null pointers are fine there.
        unsafe {
            let regions = px::PxBroadPhase_getRegions_mut(self.bp.as_ptr());
            if regions.is_null() {
                return false;
            }
            px::PxBroadPhaseRegions_addRegion_mut(regions, &region, false, ptr::null(), ptr::null())
                != u32::MAX
        }
    }

    /// Runs one single-threaded update (no continuation task) and returns PhysX's found and
    /// lost pairs.
    ///
    /// Panics unless: the three arrays have the same length `capacity`; every handle is
    /// below `capacity - 1` (MBP reads 16 bytes from each box's maximum, one float past it,
    /// and asserts `handle + 1 < capacity`); each list is strictly increasing (PhysX wants
    /// them sorted and without repeats); created handles are absent from PhysX and updated
    /// and removed ones present (which also keeps the three lists disjoint).
    pub fn update(&mut self, data: &UpdateData<'_>) -> UpdateResults<'_> {
        let capacity = data.bounds.len();
        assert!(
            data.groups.len() == capacity && data.distances.len() == capacity,
            "bounds, groups and distances must have the same length"
        );
        assert!(
            capacity <= MAX_HANDLES as usize + 1,
            "too many handles for PhysX"
        );
        let limit = capacity.saturating_sub(1);
        for list in [data.created, data.updated, data.removed] {
            assert!(
                list.windows(2).all(|w| w[0] < w[1]),
                "handle lists must be strictly increasing"
            );
            assert!(
                list.last().is_none_or(|&h| (h as usize) < limit),
                "handle beyond the arrays"
            );
        }
        if self.present.len() < capacity {
            self.present.resize(capacity, false);
        }
        for &h in data.created {
            assert!(
                !self.present[h as usize],
                "created handle {h} already present"
            );
            self.present[h as usize] = true;
        }
        for &h in data.updated {
            assert!(self.present[h as usize], "updated handle {h} not present");
        }
        for &h in data.removed {
            assert!(self.present[h as usize], "removed handle {h} not present");
            self.present[h as usize] = false;
        }
        let count = |list: &[u32]| list.len() as u32;
        let mut out_of_bounds = 0;
        let _scope = HeapScope::enter(&self.heap);
        // SAFETY: `self.bp` is a live broad phase we own, used through `&mut self`. The
        // update data points into slices borrowed for this call: each handle list has the
        // length passed with it, and `bounds`, `groups`, `distances` have `capacity`
        // elements, above every handle + 1 (checked above), which PhysX reads during
        // `update` only (it does not keep the pointers past the call: the next update passes
        // them again). The protocol checks above keep PhysX's internal tables consistent.
        // `update` with a null continuation runs synchronously on this thread (the parallel
        // ABP too: it only spawns tasks given a continuation). `getRegions` is null except
        // for MBP; its out-of-bounds list is read before `fetchResults`, which clears it.
        // `fetchResults` writes into `self.results` pointers to arrays owned by the broad
        // phase, valid until its next update or release; the returned slices borrow `self`,
        // so they cannot outlive either.
        unsafe {
            let update = px::PxBroadPhaseUpdateData_new(
                data.created.as_ptr(),
                count(data.created),
                data.updated.as_ptr(),
                count(data.updated),
                data.removed.as_ptr(),
                count(data.removed),
                data.bounds.as_ptr(),
                data.groups.as_ptr(),
                data.distances.as_ptr(),
                capacity as u32,
            );
            px::PxBroadPhase_update_mut(self.bp.as_ptr(), &update, ptr::null_mut());
            if self.kind == PxBroadPhaseType::Mbp {
                let regions = px::PxBroadPhase_getRegions_mut(self.bp.as_ptr());
                if !regions.is_null() {
                    out_of_bounds = px::PxBroadPhaseRegions_getNbOutOfBoundsObjects(regions);
                }
            }
            px::PxBroadPhase_fetchResults_mut(self.bp.as_ptr(), &mut self.results);
            let slice = |p: *const PxBroadPhasePair, n: u32| {
                if p.is_null() || n == 0 {
                    &[][..]
                } else {
                    std::slice::from_raw_parts(p, n as usize)
                }
            };
            UpdateResults {
                created: slice(self.results.mCreatedPairs, self.results.mNbCreatedPairs),
                deleted: slice(self.results.mDeletedPairs, self.results.mNbDeletedPairs),
                out_of_bounds,
            }
        }
    }
}

impl Drop for RawBroadPhase {
    fn drop(&mut self) {
        let _scope = HeapScope::enter(&self.heap);
        // SAFETY: we own the broad phase and release it exactly once; no slice of its
        // results can be alive (they borrow `self`).
        unsafe { px::PxBroadPhase_release_mut(self.bp.as_ptr()) }
    }
}
