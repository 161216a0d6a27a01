//! Exact keys of graphs: a canonical labelling of our own (individualization–refinement), and a key
//! that stores the whole labelled graph.
//!
//! A graph here is its adjacency rows on vertices `0..k` (`rows[u]` bit `w`: an edge `u–w`), at
//! most 128 vertices.
//!
//! **Canonical labelling.** Colour refinement splits the vertices into cells by colour, then each
//! cell by how many neighbours its vertices have in every cell, until no cell splits (an equitable
//! partition). Colours are ranks of isomorphism-invariant signatures, so an isomorphism maps the
//! partition of a graph onto the partition of its image. While a cell has more than one vertex, the
//! first smallest such cell is split by individualizing each of its vertices in turn (a branch
//! each), then refining again. At a leaf every vertex has its own colour, which is its label; the
//! canonical form is the least labelled graph over all leaves (comparing adjacency rows in order).
//! The leaves of a graph and of any relabelling of it are the same labelled graphs, so the least is
//! the same: isomorphic graphs get the same form. Branches that an automorphism maps onto a branch
//! already explored hold the same leaves and are skipped (twins at once, and the orbits of the
//! automorphisms that leaves equal to the least one reveal), so stars, trees and vertex-transitive
//! graphs stay small.
//!
//! **Bounded, and exact either way.** The tree is explored up to [`MOST_TREE_NODES`] nodes (highly
//! symmetric graphs have many equal leaves). Past that, the least leaf found so far is used: a
//! labelling that depends on the input's order, so isomorphic graphs may then get different keys.
//! Nothing is ever wrong for it: the key ([`key`]) is the vertex count and every bit of the upper
//! triangle of the labelled adjacency matrix, so a key determines its graph exactly, and the value
//! stored under it is that graph's. Only sharing between isomorphic copies is lost.
//!
//! Why our own and not nauty: nauty is C, its Rust bindings build it from source, and its labelling
//! is canonical only per nauty version and options; ours is pure Rust, a few hundred lines, and its
//! keys (which the store keeps across restarts) depend only on this file.

/// The most nodes of the individualization–refinement tree explored for one graph.
pub const MOST_TREE_NODES: u32 = 2048;

/// The labelling a graph's key is built from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Labelling {
    /// The labelled graph: `rows[i]` bit `j`, an edge between the vertices labelled `i` and `j`.
    pub rows: Vec<u128>,
    /// Whether the whole tree was explored (the labelling is canonical); if not, the key is still
    /// exact, but an isomorphic graph may get another one.
    pub canonical: bool,
    /// The tree nodes explored (work, for the solve's budget checks).
    pub nodes: u32,
}

/// The canonical labelling of `rows` (see the module's documentation), within [`MOST_TREE_NODES`].
pub fn canonical_labelling(rows: &[u128]) -> Labelling {
    labelling_within(rows, MOST_TREE_NODES)
}

/// The canonical labelling of `rows` within `most_nodes` tree nodes.
pub(crate) fn labelling_within(rows: &[u128], most_nodes: u32) -> Labelling {
    let mut search = Search { rows, best: None, automorphisms: Vec::new(), nodes: 0, most_nodes, complete: true };
    let colours = refine(rows, vec![0; rows.len()]);
    search.explore(colours, &mut Vec::new());
    let best = search.best.map(|(best, _)| best).unwrap_or_default();
    Labelling { rows: best, canonical: search.complete, nodes: search.nodes }
}

/// The key of a labelled graph: its vertex count, then the bits of the upper triangle of its
/// adjacency matrix, row by row (`(0,1), (0,2), …, (1,2), …`), eight to a byte, lowest first.
pub fn key(rows: &[u128]) -> Vec<u8> {
    let k = rows.len();
    let bits = k * k.saturating_sub(1) / 2;
    let mut key = Vec::with_capacity(1 + bits.div_ceil(8));
    key.push(k as u8); // At most 128 vertices.
                       // Bits not yet in a byte (fewer than 8 between appends), lowest first, and how many.
    let (mut pending, mut held) = (0u128, 0usize);
    let mut append = |bits: u128, width: usize| {
        pending |= bits << held;
        held += width;
        while held >= 8 {
            key.push(pending as u8);
            pending >>= 8;
            held -= 8;
        }
    };
    for (i, row) in rows.iter().enumerate().take(k.saturating_sub(1)) {
        // Row i past the diagonal: (i, i+1), …, (i, k−1), in two halves of at most 64 bits.
        let width = k - i - 1;
        let part = row >> (i + 1) & (u128::MAX >> (128 - width));
        append(part & u128::from(u64::MAX), width.min(64));
        if width > 64 {
            append(part >> 64, width - 64);
        }
    }
    if held > 0 {
        key.push(pending as u8);
    }
    key
}

/// The labelled graph of a key, if it is one ([`key`]'s inverse).
pub fn graph_of_key(key: &[u8]) -> Option<Vec<u128>> {
    let (&k, bits) = key.split_first()?;
    let k = usize::from(k);
    if k > 128 || bits.len() != (k * k.saturating_sub(1) / 2).div_ceil(8) {
        return None;
    }
    let mut rows = vec![0u128; k];
    let mut at = 0;
    for i in 0..k {
        for j in i + 1..k {
            if bits[at / 8] >> (at % 8) & 1 == 1 {
                rows[i] |= 1 << j;
                rows[j] |= 1 << i;
            }
            at += 1;
        }
    }
    Some(rows)
}

/// The refinement tree of one graph being explored.
struct Search<'g> {
    rows: &'g [u128],
    /// The least labelled graph of the leaves met so far, and the vertex of each label there.
    best: Option<(Vec<u128>, Vec<usize>)>,
    /// Automorphisms found (two leaves with the same labelled graph), as images of the vertices.
    automorphisms: Vec<Vec<usize>>,
    nodes: u32,
    /// The node bound.
    most_nodes: u32,
    /// Whether no branch was cut for the node bound.
    complete: bool,
}

impl Search<'_> {
    /// Explores the subtree under an equitable colouring (colours `0..cells`, by rank) reached by
    /// individualizing the vertices `path`.
    ///
    /// Children equivalent under an automorphism fixing `path` pointwise have the same leaves, so
    /// one of them is explored: of twins in the target cell (vertices with the same neighbours
    /// besides each other, which the transposition swapping them is an automorphism for), and of
    /// vertices in one orbit of the automorphisms found so far that fix `path`.
    fn explore(&mut self, colours: Vec<u32>, path: &mut Vec<usize>) {
        self.nodes += 1;
        let Some(cell) = target_cell(&colours) else {
            self.leaf(&colours);
            return;
        };
        let mut explored: Vec<usize> = Vec::new();
        for vertex in (0..colours.len()).filter(|&u| colours[u] == cell) {
            if explored.iter().any(|&done| self.equivalent(done, vertex, path)) {
                continue;
            }
            // The first branch always goes on, so that there is a leaf.
            if !explored.is_empty() && self.nodes >= self.most_nodes {
                self.complete = false;
                return;
            }
            explored.push(vertex);
            let individualized: Vec<u32> =
                colours.iter().enumerate().map(|(u, &c)| 2 * c + u32::from(u != vertex)).collect();
            path.push(vertex);
            self.explore(refine(self.rows, individualized), path);
            path.pop();
        }
    }

    /// A leaf: its labelled graph, kept if it is the least so far, or an automorphism if it is the
    /// least again.
    fn leaf(&mut self, colours: &[u32]) {
        let labelled = relabel(self.rows, colours);
        let mut vertex_of = vec![0; colours.len()];
        for (u, &c) in colours.iter().enumerate() {
            vertex_of[c as usize] = u;
        }
        match &self.best {
            Some((best, best_vertex_of)) if labelled == *best => {
                let image = colours.iter().map(|&c| best_vertex_of[c as usize]).collect();
                self.automorphisms.push(image);
            }
            Some((best, _)) if labelled > *best => {}
            _ => self.best = Some((labelled, vertex_of)),
        }
    }

    /// Whether an automorphism fixing `path` pointwise maps `done` to `vertex`: they are twins, or
    /// in one orbit of the automorphisms found that fix `path`.
    fn equivalent(&self, done: usize, vertex: usize, path: &[usize]) -> bool {
        let (a, b) = (self.rows[done] & !(1 << vertex), self.rows[vertex] & !(1 << done));
        if a == b {
            return true;
        }
        let fixing: Vec<&Vec<usize>> =
            self.automorphisms.iter().filter(|image| path.iter().all(|&p| image[p] == p)).collect();
        if fixing.is_empty() {
            return false;
        }
        // The orbit of `done` under the group the fixing automorphisms generate.
        let mut orbit = 1u128 << done;
        let mut frontier = orbit;
        while frontier != 0 {
            let u = frontier.trailing_zeros() as usize;
            frontier &= frontier - 1;
            for image in &fixing {
                let next = 1u128 << image[u];
                if orbit & next == 0 {
                    orbit |= next;
                    frontier |= next;
                }
            }
        }
        orbit >> vertex & 1 == 1
    }
}

/// The colour of the first smallest cell of more than one vertex, if any.
fn target_cell(colours: &[u32]) -> Option<u32> {
    let mut sizes = vec![0u32; colours.len()];
    for &c in colours {
        sizes[c as usize] += 1;
    }
    (0..sizes.len()).filter(|&c| sizes[c] > 1).min_by_key(|&c| (sizes[c], c)).map(|c| c as u32)
}

/// The graph relabelled by a discrete colouring: vertex `u` becomes `colours[u]`.
fn relabel(rows: &[u128], colours: &[u32]) -> Vec<u128> {
    let mut labelled = vec![0u128; rows.len()];
    for (u, &row) in rows.iter().enumerate() {
        let mut rest = row;
        while rest != 0 {
            let w = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            labelled[colours[u] as usize] |= 1 << colours[w];
        }
    }
    labelled
}

/// Colour refinement from `colours` (any numbers; only their order matters) to the coarsest
/// equitable partition finer than it, as colours `0..cells` ranked by (colour, neighbours in each
/// cell): invariant under relabelling the vertices.
fn refine(rows: &[u128], colours: Vec<u32>) -> Vec<u32> {
    let k = rows.len();
    let mut distinct = colours.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let mut colours: Vec<u32> = colours.iter().map(|c| distinct.binary_search(c).expect("listed") as u32).collect();
    let mut cells = distinct.len();
    let mut order: Vec<usize> = (0..k).collect();
    loop {
        let mut members = vec![0u128; cells];
        for (u, &c) in colours.iter().enumerate() {
            members[c as usize] |= 1 << u;
        }
        // Vertex u's signature: its colour, then its neighbours in each cell.
        let width = cells + 1;
        let mut signatures = vec![0u32; k * width];
        for (u, signature) in signatures.chunks_exact_mut(width).enumerate() {
            signature[0] = colours[u];
            for (count, &cell) in signature[1..].iter_mut().zip(&members) {
                *count = (rows[u] & cell).count_ones();
            }
        }
        let signature = |u: usize| &signatures[u * width..(u + 1) * width];
        order.sort_unstable_by(|&a, &b| signature(a).cmp(signature(b)));
        let mut finer = vec![0u32; k];
        let mut finer_cells = 0;
        for (at, &u) in order.iter().enumerate() {
            if at > 0 && signature(order[at - 1]) != signature(u) {
                finer_cells += 1;
            }
            finer[u] = finer_cells;
        }
        let finer_cells = if k == 0 { 0 } else { finer_cells as usize + 1 };
        if finer_cells == cells {
            return colours;
        }
        (colours, cells) = (finer, finer_cells);
    }
}
