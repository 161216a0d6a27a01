//! Node Kayles on any graph of at most 128 vertices.
//!
//! A move chooses a vertex and removes it and its neighbours (its closed neighbourhood N\[v\]); the
//! player who cannot move, on the empty graph, loses. Kayles is Node Kayles on a path, so paths
//! have the values of the octal game 0.137 (Dawson's Chess; Winning Ways, ch. 4). The game is
//! PSPACE-complete on general graphs; this is an exact search by components (as in Bodlaender,
//! Kratsch and Timmer, "Exact algorithms for Kayles", 2015):
//!
//! * A position splits into connected components; its value is the XOR of theirs, and a
//!   component's value is the mex of its options' values (`engine`).
//! * Components are valued by rule where a rule applies: a complete graph (a single vertex
//!   included) is worth 1, as every move removes everything; a path P_k is worth 0.137's value
//!   of k ([`PATH`]); a cycle C_k is worth 1 exactly when P_{k−3}'s value is 0, as every first
//!   move leaves P_{k−3} (so its only option value is that one).
//! * Any other component is keyed by an exact canonical form ([`canonical`]: a canonical
//!   labelling of our own, whose key stores the whole labelled graph, so that a key determines
//!   its component and no collision can give a wrong value). Isomorphic components share one
//!   entry of the solve's table and of the persistent memo (tag [`GameTag::NodeKayles`]),
//!   across requests and restarts.
//! * Vertices are numbered 1 to n in the API. The position after choosing a vertex is the graph
//!   of the vertices left, numbered 1, 2, … in their order (as a heap game's heaps are renumbered
//!   after a move); its edges keep their order and orientation.

pub mod canonical;
mod engine;
mod parts;
mod subsets;

use self::engine::Engine;
use super::placement::MAX_CELLS;
use super::{display_setup_error, FieldPath, Game, GameTag, Interrupted, MoveSet, Nimber, SearchContext, SetupError};
use super::{Lookup, ServedGame};

/// The most vertices of a graph (one bit each in a `u128`).
pub const MAX_VERTICES: u32 = 128;
/// The most edges of a graph: 128·127/2 = 8128, every edge of a simple graph on
/// [`MAX_VERTICES`] vertices; so simplicity (no self-loop, no edge twice) is the only real bound on
/// edges, and this one is checked first only to refuse a huge list before reading it.
pub const MAX_EDGES: usize = (MAX_VERTICES * (MAX_VERTICES - 1) / 2) as usize;

/// Which end of an edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The edge's `from`.
    From,
    /// The edge's `to`.
    To,
}

impl End {
    /// The field's name.
    fn field(self) -> &'static str {
        match self {
            End::From => "from",
            End::To => "to",
        }
    }
}

/// Why a graph is not a valid Node Kayles position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GraphError {
    /// More than [`MAX_VERTICES`] vertices.
    TooManyVertices(u32),
    /// More than [`MAX_EDGES`] edges.
    TooManyEdges(usize),
    /// An end of an edge is not a vertex of the graph.
    NoSuchVertex {
        /// The 0-based index of the edge.
        edge: usize,
        /// Which end.
        end: End,
        /// The vertex given.
        vertex: u32,
        /// The graph's vertex count.
        vertices: u32,
    },
    /// An edge from a vertex to itself.
    SelfLoop {
        /// The 0-based index of the edge.
        edge: usize,
        /// The vertex (1-based).
        vertex: u32,
    },
    /// An edge given twice (in either orientation).
    DuplicateEdge {
        /// The 0-based index of the repeated edge.
        edge: usize,
        /// The 0-based index of its first occurrence.
        first: usize,
    },
}

impl SetupError for GraphError {
    fn field(&self) -> FieldPath {
        let edges = FieldPath::field("edges");
        match *self {
            GraphError::TooManyVertices(_) => FieldPath::field("vertices"),
            GraphError::TooManyEdges(_) => edges,
            GraphError::NoSuchVertex { edge, end, .. } => edges.at(edge).then(end.field()),
            GraphError::SelfLoop { edge, .. } | GraphError::DuplicateEdge { edge, .. } => edges.at(edge),
        }
    }

    fn problem(&self, name: &dyn Fn(&FieldPath) -> String) -> String {
        match *self {
            GraphError::TooManyVertices(count) => format!("is {count}; the limit is {MAX_VERTICES}"),
            GraphError::TooManyEdges(count) => {
                format!("has {count} edges; the limit is {MAX_EDGES} (every edge of a simple graph on {MAX_VERTICES} vertices)")
            }
            GraphError::NoSuchVertex { vertex, vertices, .. } => {
                format!("is {vertex}; a vertex is from 1 to vertices = {vertices}")
            }
            GraphError::SelfLoop { vertex, .. } => {
                format!("is a self-loop at vertex {vertex}; an edge joins two different vertices")
            }
            GraphError::DuplicateEdge { first, .. } => format!(
                "repeats {} (in either orientation); each edge may be given once",
                name(&FieldPath::field("edges").at(first))
            ),
        }
    }
}

display_setup_error!(GraphError);

/// A graph of at most [`MAX_VERTICES`] vertices, simple by construction: a Node Kayles position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Graph {
    /// `neighbours[u]` bit `w`: an edge between the 0-based vertices `u` and `w`.
    neighbours: Vec<u128>,
    /// The edges as given (0-based ends, in their order and orientation), to send the position back
    /// as it came.
    edges: Vec<[u8; 2]>,
}

/// A move: the vertex chosen, 1-based. Moves order by vertex.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Choice {
    /// The vertex, 1-based.
    pub vertex: u32,
}

/// The set of the first `n` vertices.
fn first_vertices(n: usize) -> u128 {
    if n >= 128 {
        u128::MAX
    } else {
        (1u128 << n) - 1
    }
}

/// The values of paths P_0 to P_256 (the longest a board of [`MAX_CELLS`] cells holds) by the
/// rules of Node Kayles: choosing the vertex at 0-based position `i` of P_k leaves P_{i−1} and P_{k−i−2} (fewer at the ends). These are the values of
/// the octal game 0.137, Dawson's Chess (Winning Ways, ch. 4; period 34 from heap 52), tested
/// against the heap engine; the 2×2 game's straight lines of placements are such paths too.
pub const PATH: [u8; MAX_CELLS + 1] = path_values();

const fn path_values() -> [u8; MAX_CELLS + 1] {
    let mut values = [0u8; MAX_CELLS + 1];
    let mut k = 1;
    while k < values.len() {
        // The values stay below 64 (at most 9 on these paths), so one word holds the options'.
        let mut seen: u64 = 0;
        let mut i = 0;
        while i < k {
            let (left, right) = (i.saturating_sub(1), (k - i).saturating_sub(2));
            seen |= 1 << (values[left] ^ values[right]);
            i += 1;
        }
        values[k] = (!seen).trailing_zeros() as u8;
        k += 1;
    }
    values
}

impl Graph {
    /// The graph of `vertices` vertices (1-based in `edges`) and these edges, validated.
    pub fn new(vertices: u32, edges: &[(u32, u32)]) -> Result<Graph, GraphError> {
        if vertices > MAX_VERTICES {
            return Err(GraphError::TooManyVertices(vertices));
        }
        if edges.len() > MAX_EDGES {
            return Err(GraphError::TooManyEdges(edges.len()));
        }
        let mut neighbours = vec![0u128; vertices as usize];
        let mut given = Vec::with_capacity(edges.len());
        for (edge, &(from, to)) in edges.iter().enumerate() {
            for (end, vertex) in [(End::From, from), (End::To, to)] {
                if !(1..=vertices).contains(&vertex) {
                    return Err(GraphError::NoSuchVertex { edge, end, vertex, vertices });
                }
            }
            if from == to {
                return Err(GraphError::SelfLoop { edge, vertex: from });
            }
            let (u, w) = ((from - 1) as usize, (to - 1) as usize);
            if neighbours[u] >> w & 1 == 1 {
                let same = |&(a, b): &(u32, u32)| (a, b) == (from, to) || (a, b) == (to, from);
                let first = edges.iter().position(same).expect("an earlier edge set the bit");
                return Err(GraphError::DuplicateEdge { edge, first });
            }
            neighbours[u] |= 1 << w;
            neighbours[w] |= 1 << u;
            given.push([u as u8, w as u8]);
        }
        Ok(Graph { neighbours, edges: given })
    }

    /// The number of vertices.
    pub fn vertices(&self) -> usize {
        self.neighbours.len()
    }

    /// The edges, 1-based, in their order and orientation.
    pub fn edges(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.edges.iter().map(|&[u, w]| (u32::from(u) + 1, u32::from(w) + 1))
    }

    /// The neighbourhood of each 0-based vertex, as bits.
    pub fn neighbours(&self) -> &[u128] {
        &self.neighbours
    }

    /// Every vertex, as bits.
    fn all(&self) -> u128 {
        first_vertices(self.vertices())
    }

    /// The closed neighbourhood N\[v\] of the 0-based vertex `v`: what choosing it removes.
    fn closed_neighbourhood(&self, v: usize) -> u128 {
        self.neighbours[v] | 1 << v
    }

    /// A vertex whose choice leads to value `target`, the first in vertex order, given the
    /// components (as bits) with their values and the total.
    fn choice_to(
        &self,
        target: Nimber,
        parts: &[(u128, u8)],
        total: Nimber,
        engine: &mut Engine,
    ) -> Result<Option<Choice>, Interrupted> {
        for v in 0..self.vertices() {
            let Some(&(part, value)) = parts.iter().find(|(part, _)| part >> v & 1 == 1) else { continue };
            let rest = part & !self.closed_neighbourhood(v);
            if total ^ u64::from(value) ^ engine.value_of_set(&self.neighbours, rest)? == target {
                return Ok(Some(Choice { vertex: v as u32 + 1 }));
            }
        }
        Ok(None)
    }
}

impl Game for Graph {
    type Move = Choice;
    type Value = Nimber;

    fn value(&self, context: &mut SearchContext) -> Result<Nimber, Interrupted> {
        Engine::new(context).value_of_graph(&self.neighbours, self.all())
    }

    fn moves(&self) -> MoveSet<Choice> {
        let mut moves = MoveSet::empty();
        moves.push(self.vertices() as u128, |i| Choice { vertex: i as u32 + 1 });
        moves
    }

    fn is_legal(&self, mv: &Choice) -> bool {
        (1..=self.vertices()).contains(&(mv.vertex as usize))
    }

    /// The graph of the vertices left, renumbered in their order; the edges between them kept in
    /// their order and orientation.
    fn play_unchecked(&self, mv: &Choice) -> Graph {
        debug_assert!(self.is_legal(mv), "{mv:?} is not legal in {self:?}");
        let removed = self.closed_neighbourhood(mv.vertex as usize - 1);
        let left = self.all() & !removed;
        let mut number = [u8::MAX; 128];
        let mut next = 0u8;
        for (v, slot) in number.iter_mut().enumerate().take(self.vertices()) {
            if left >> v & 1 == 1 {
                *slot = next;
                next += 1;
            }
        }
        let mut neighbours = vec![0u128; usize::from(next)];
        let mut edges = Vec::new();
        for &[u, w] in &self.edges {
            let (u, w) = (number[usize::from(u)], number[usize::from(w)]);
            if u != u8::MAX && w != u8::MAX {
                neighbours[usize::from(u)] |= 1 << w;
                neighbours[usize::from(w)] |= 1 << u;
                edges.push([u, w]);
            }
        }
        Graph { neighbours, edges }
    }

    /// Stops at the first vertex found, evaluating only the component it is in.
    fn first_move_to(&self, target: Nimber, context: &mut SearchContext) -> Result<Option<Choice>, Interrupted> {
        let mut engine = Engine::new(context);
        let (parts, total) = engine.component_values(&self.neighbours, self.all())?;
        self.choice_to(target, &parts, total, &mut engine)
    }

    /// Computes the components' values once, for the value and the winning vertex both.
    fn best_move(&self, context: &mut SearchContext) -> Result<(Nimber, Option<Choice>), Interrupted> {
        let mut engine = Engine::new(context);
        let (parts, total) = engine.component_values(&self.neighbours, self.all())?;
        let mv = if total == 0 { self.moves().get(0) } else { self.choice_to(0, &parts, total, &mut engine)? };
        Ok((total, mv))
    }
}

impl ServedGame for Graph {
    const NAME: &'static str = "node_kayles";
    const SEARCHES: bool = true;
    type Error = GraphError;
    type Learnt = engine::Learnt;

    fn items(&self) -> usize {
        self.vertices()
    }

    /// At most 20 vertices: a search of at most 2^20 vertex sets.
    fn is_cheap(&self) -> bool {
        self.vertices() <= 20
    }

    fn value_without_search(&self, lookup: &Lookup) -> Option<(Nimber, u64)> {
        engine::value_without_search(&self.neighbours, self.all(), &|key| lookup(GameTag::NodeKayles, key))
    }
}

mod wire;

#[cfg(test)]
mod tests;
