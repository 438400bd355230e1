//! Host and GPU identities of scanned rows, mapped to dense ids and slots (shared by summarize and report).

use std::collections::HashMap;

use arrow_array::Array;

use gpumon_schema::cols::{self, Interner, NO_U64};

/// No slot (a row without a usable GPU key).
pub(crate) const NONE: u32 = u32::MAX;

/// Sort the rows of a batch by GPU slot (a counting sort, stable: each slot's rows stay in batch
/// order; rows of slot [`NONE`] are left out): `order[lo..hi]` are the rows of each `(slot, lo, hi)`
/// of `groups`, slots in increasing order.
pub(crate) fn group_by_slot(
    slot: &[u32],
    slots: usize,
    order: &mut Vec<u32>,
    groups: &mut Vec<(u32, usize, usize)>,
) {
    let mut count = vec![0usize; slots + 1];
    for &sl in slot {
        if sl != NONE
            && let Some(c) = count.get_mut(sl as usize + 1)
        {
            *c += 1;
        }
    }
    for k in 1..count.len() {
        count[k] += count[k - 1];
    }
    groups.clear();
    groups.extend(
        count
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[1] > w[0])
            .map(|(k, w)| (k as u32, w[0], w[1])),
    );
    order.clear();
    order.resize(count[slots], 0);
    for (i, &sl) in slot.iter().enumerate() {
        if sl != NONE
            && let Some(at) = count.get_mut(sl as usize)
            && let Some(o) = order.get_mut(*at)
        {
            *o = i as u32;
            *at += 1;
        }
    }
}

/// A GPU's key within its host.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum GpuKey {
    Index(u32),
    Uuid(String),
    /// A MIG instance: its GPU's index and its GPU instance id (`mig.gi`).
    Mig(u32, u32),
}

impl GpuKey {
    /// How reports name the unit: the index, the uuid, or `0/gi1` for a MIG instance.
    pub(crate) fn label(&self) -> String {
        match self {
            GpuKey::Index(x) => x.to_string(),
            GpuKey::Uuid(u) => u.clone(),
            GpuKey::Mig(x, gi) => format!("{x}/gi{gi}"),
        }
    }

    /// The GPU's index (a MIG instance's is its GPU's).
    pub(crate) fn index(&self) -> Option<u32> {
        match self {
            GpuKey::Index(x) | GpuKey::Mig(x, _) => Some(*x),
            GpuKey::Uuid(_) => None,
        }
    }
}

/// Interned host names and the slot of every (host, GPU) seen so far.
#[derive(Debug, Default, Clone)]
pub(crate) struct Keyer {
    pub hosts: Interner,
    uuids: Interner,
    /// Per host id: slot by GPU index, and by uuid id.
    by_index: Vec<Vec<u32>>,
    by_uuid: Vec<HashMap<u32, u32>>,
    /// Per host id: slot by (GPU index, GPU instance id) of MIG instance rows.
    by_mig: Vec<HashMap<(u32, u32), u32>>,
    slots: u32,
}

/// Per-row keys of one batch (reused scratch).
#[derive(Debug, Default)]
pub(crate) struct RowKeys {
    pub host: Vec<u32>,
    gpu: Vec<u64>,
    uuid: Vec<u32>,
    by_uuid: bool,
    /// Per row: its `mig.gi` ([`NO_U64`] on whole-GPU rows); empty when the batch has no MIG rows.
    mig: Vec<u64>,
}

impl Keyer {
    pub(crate) fn host_id(&mut self, name: &str) -> u32 {
        let id = self.hosts.id(name);
        while self.by_index.len() <= id as usize {
            self.by_index.push(Vec::new());
            self.by_uuid.push(HashMap::new());
            self.by_mig.push(HashMap::new());
        }
        id
    }

    /// Read the host and GPU key columns of a batch of `n` rows. GPUs are keyed by `index`, or by
    /// `uuid` for files without an index; rows without a host belong to `default_host`. Only the
    /// rows `keep` selects (all without it) make hosts known: the others' host is [`NONE`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn read(
        &mut self,
        host: Option<&dyn Array>,
        index: Option<&dyn Array>,
        uuid: Option<&dyn Array>,
        default_host: &str,
        n: usize,
        keep: Option<&[bool]>,
        k: &mut RowKeys,
    ) {
        k.host.clear();
        let mut local = Interner::default();
        if host.is_some_and(|h| cols::str_ids(h, &mut local, NONE, &mut k.host)) {
            // Hosts are known in the order of their first row, rows without a host included.
            let mut global: Vec<u32> = vec![NONE; local.len()];
            let mut default_id = NONE;
            for (i, id) in k.host.iter_mut().enumerate() {
                if keep.is_some_and(|k| !k.get(i).copied().unwrap_or(false)) {
                    *id = NONE;
                    continue;
                }
                *id = match global.get_mut(*id as usize) {
                    Some(g) if *g != NONE => *g,
                    Some(g) => {
                        *g = self.hosts.id(local.name(*id));
                        *g
                    }
                    None if default_id != NONE => default_id,
                    None => {
                        default_id = self.hosts.id(default_host);
                        default_id
                    }
                };
            }
        } else {
            let default_id = self.hosts.id(default_host);
            k.host.clear();
            k.host.resize(n, default_id);
        }
        for h in 0..self.hosts.len() {
            let name = self.hosts.name(h as u32).to_string();
            self.host_id(&name);
        }
        k.gpu.clear();
        k.uuid.clear();
        k.by_uuid = match index {
            Some(ix) if cols::u64_values(ix, &mut k.gpu) => false,
            _ => {
                k.gpu.clear();
                k.gpu.resize(n, NO_U64);
                uuid.is_some_and(|u| cols::str_ids(u, &mut self.uuids, NONE, &mut k.uuid))
            }
        };
    }

    /// Read the `mig.gi` column of the batch (after [`Keyer::read`]): a row with one is keyed as a
    /// MIG instance of its GPU.
    pub(crate) fn read_mig(&mut self, gi: Option<&dyn Array>, k: &mut RowKeys) {
        k.mig.clear();
        if let Some(c) = gi
            && cols::u64_values(c, &mut k.mig)
            && k.mig.iter().all(|&g| g == NO_U64)
        {
            k.mig.clear();
        }
    }

    /// The slot of every row whose GPU is known by index (the common case, without allocating),
    /// [`NONE`] for the others ([`Keyer::slot`] decides those): one pass with the slot table of the
    /// current host at hand.
    pub(crate) fn known(&self, k: &RowKeys, out: &mut Vec<u32>) {
        out.clear();
        if k.by_uuid {
            out.resize(k.host.len(), NONE);
            return;
        }
        let (mut host, mut table): (u32, &[u32]) = (NONE, &[]);
        out.extend(k.host.iter().zip(&k.gpu).enumerate().map(|(i, (&h, &g))| {
            if h != host {
                host = h;
                table = self.by_index.get(h as usize).map_or(&[], Vec::as_slice);
            }
            let whole = k.mig.get(i).is_none_or(|&m| m == NO_U64);
            match usize::try_from(g).ok().and_then(|g| table.get(g)) {
                Some(&sl) if whole => sl,
                _ => NONE,
            }
        }));
    }

    /// The slot of row `i` ([`NONE`] without a usable key) and, for a GPU seen for the first time,
    /// its key (the caller appends its per-GPU state for it).
    #[inline]
    pub(crate) fn slot(&mut self, k: &RowKeys, i: usize) -> (u32, Option<GpuKey>) {
        let h = k.host[i];
        if k.by_uuid {
            return match k.uuid.get(i) {
                Some(&u) if u != NONE => {
                    let name = self.uuids.name(u).to_string();
                    self.slot_for(h, GpuKey::Uuid(name))
                }
                _ => (NONE, None),
            };
        }
        let g = k.gpu[i];
        if g == NO_U64 || g > u64::from(u16::MAX) {
            return (NONE, None);
        }
        if let Some(&gi) = k.mig.get(i).filter(|&&m| m != NO_U64) {
            return match u32::try_from(gi) {
                Ok(gi) => self.slot_for(h, GpuKey::Mig(g as u32, gi)),
                Err(_) => (NONE, None),
            };
        }
        // Fast path: the slot table of this host.
        match self.by_index[h as usize].get(g as usize) {
            Some(&sl) if sl != NONE => (sl, None),
            _ => self.slot_for(h, GpuKey::Index(g as u32)),
        }
    }

    /// The slot of `key` on `host`, creating it (and returning the key) when new.
    pub(crate) fn slot_for(&mut self, host: u32, key: GpuKey) -> (u32, Option<GpuKey>) {
        let h = host as usize;
        let existing = match &key {
            GpuKey::Index(i) => self.by_index[h].get(*i as usize).copied().filter(|&s| s != NONE),
            GpuKey::Uuid(u) => {
                let uid = self.uuids.id(u);
                self.by_uuid[h].get(&uid).copied()
            }
            GpuKey::Mig(i, gi) => self.by_mig[h].get(&(*i, *gi)).copied(),
        };
        if let Some(s) = existing {
            return (s, None);
        }
        let s = self.slots;
        self.slots += 1;
        match &key {
            GpuKey::Index(i) => {
                let t = &mut self.by_index[h];
                if t.len() <= *i as usize {
                    t.resize(*i as usize + 1, NONE);
                }
                t[*i as usize] = s;
            }
            GpuKey::Uuid(u) => {
                let uid = self.uuids.id(u);
                self.by_uuid[h].insert(uid, s);
            }
            GpuKey::Mig(i, gi) => {
                self.by_mig[h].insert((*i, *gi), s);
            }
        }
        (s, Some(key))
    }
}
