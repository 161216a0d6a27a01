//! The components of an option of the 2×2 game found without a flood fill, when the ring of 16
//! placements around the removed 3×3 block is connected.

use crate::games::placement::PointSet;

/// The connected components of an option of a connected set, the one that played placement
/// `played`. Each holds a placement of the ring of 16 around the removed 3×3 block (a path to the
/// played placement passes through the ring), so once the ring's remaining placements are
/// connected among themselves, what remains is one component: found without a flood fill.
pub fn parts_after<S: PointSet>(rest: S, played: u32) -> impl Iterator<Item = S> {
    rest.split(S::with_king_neighbours, move |rest: S| ring_is_connected(ring_around(rest, played)))
}

/// The placements at king distance exactly 2 from placement `index`: the ring of 16 cells
/// around the 3×3 block centred on it, bit `i` for the `i`-th cell of the 5×5 box in
/// row-major order, the inner 3×3 skipped.
fn ring_around<S: PointSet>(set: S, index: u32) -> u16 {
    let (row, column) = (index / S::STRIDE, index % S::STRIDE);
    let mut block = 0u32;
    for i in 0..5 {
        if let Some(r) = (row + i).checked_sub(2).filter(|&r| r < S::ROWS) {
            // Columns `column - 2 ..= column + 2` of row `r` (none past the row's ends).
            block |= ((u128::from(set.row(r as usize)) << 2 >> column) as u32 & 0x1F) << (5 * i);
        }
    }
    let sides = |r: u32| (block >> (5 * r) & 1) | (block >> (5 * r + 4) & 1) << 1;
    (block & 0x1F | sides(1) << 5 | sides(2) << 7 | sides(3) << 9 | (block >> 20) << 11) as u16
}

/// The cells of the ring of 16 around a 3×3 block, as (row, column) in the ring's 5×5 box: bit
/// `i` of a ring is its `i`-th cell in row-major order, the inner 3×3 skipped.
const RING_CELLS: [(u32, u32); 16] = {
    let mut cells = [(0, 0); 16];
    let (mut i, mut cell) = (0, 0);
    while cell < 25 {
        let (r, c) = (cell / 5, cell % 5);
        if r == 0 || r == 4 || c == 0 || c == 4 {
            cells[i] = (r, c);
            i += 1;
        }
        cell += 1;
    }
    cells
};

/// For each cell of the ring, the cells of the ring it touches (itself included).
const RING_NEIGHBOURS: [u16; 16] = {
    let mut neighbours = [0u16; 16];
    let mut i = 0;
    while i < 16 {
        let mut j = 0;
        while j < 16 {
            if RING_CELLS[i].0.abs_diff(RING_CELLS[j].0) <= 1 && RING_CELLS[i].1.abs_diff(RING_CELLS[j].1) <= 1 {
                neighbours[i] |= 1 << j;
            }
            j += 1;
        }
        i += 1;
    }
    neighbours
};

/// The placements of `ring` connected to its lowest one through the ring itself.
const fn ring_group(ring: u16) -> u16 {
    let mut group = ring & ring.wrapping_neg();
    loop {
        let mut grown = group;
        let mut rest = group;
        while rest != 0 {
            grown |= RING_NEIGHBOURS[rest.trailing_zeros() as usize];
            rest &= rest - 1;
        }
        grown &= ring;
        if grown == group {
            return group;
        }
        group = grown;
    }
}

/// Bit `ring` says whether the placements of that ring (see [`RING_CELLS`]) are connected among
/// themselves; computed at compile time.
static RING_CONNECTED: [u64; 1 << 10] = {
    let mut table = [0u64; 1 << 10];
    let mut ring: usize = 0;
    while ring < 1 << 16 {
        if ring_group(ring as u16) == ring as u16 {
            table[ring / 64] |= 1 << (ring % 64);
        }
        ring += 1;
    }
    table
};

/// Whether the placements of a ring (see [`RING_CELLS`]) are connected among themselves.
fn ring_is_connected(ring: u16) -> bool {
    RING_CONNECTED[ring as usize / 64] >> (ring % 64) & 1 == 1
}
