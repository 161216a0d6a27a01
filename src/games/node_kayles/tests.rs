//! Node Kayles against a brute force written from the rules, against published values (0.137 on
//! paths, cycles), on vertex-transitive graphs, against the 2×2 placement game's engine, and the
//! canonical keys.

use std::collections::HashMap;
use std::time::Instant;

use super::canonical::{canonical_labelling, graph_of_key, key, labelling_within};
use super::*;
use crate::games::heap::rules::Rules;
use crate::games::heap::sequence::Sequence;
use crate::games::memory_memo::MemoryMemo;
use crate::games::move_set_tests::assert_move_sets_match_search;
use crate::games::tetris::Board;
use crate::games::Wire;
use crate::games::{Budget, Memo, NoMemo};
use crate::random::SplitMix;

/// The graph of `vertices` vertices and these 1-based edges.
fn graph(vertices: u32, edges: &[(u32, u32)]) -> Graph {
    Graph::new(vertices, edges).expect("a simple graph")
}

/// The value, by the engine, with no memo.
fn value(graph: &Graph) -> Nimber {
    graph.value(&mut SearchContext::in_memory()).expect("no deadline")
}

/// The `rows`×`columns` grid: vertex `c·rows + r + 1` is the cell `(r, c)`, joined to the cells
/// beside it.
fn grid(rows: u32, columns: u32) -> Graph {
    let vertex = |r: u32, c: u32| c * rows + r + 1;
    let mut edges = Vec::new();
    for c in 0..columns {
        for r in 0..rows {
            if r + 1 < rows {
                edges.push((vertex(r, c), vertex(r + 1, c)));
            }
            if c + 1 < columns {
                edges.push((vertex(r, c), vertex(r, c + 1)));
            }
        }
    }
    graph(rows * columns, &edges)
}

/// A random graph of `vertices` vertices, each pair joined with probability `percent`.
fn random_graph(random: &mut SplitMix, vertices: u32, percent: u64) -> Graph {
    let mut edges = Vec::new();
    for u in 1..=vertices {
        for w in u + 1..=vertices {
            if random.percent(percent) {
                edges.push(if random.percent(50) { (u, w) } else { (w, u) });
            }
        }
    }
    graph(vertices, &edges)
}

/// The value of every vertex set, straight from the rules: the mex over the vertices `v` left of
/// the value of the set without `v` and its neighbours. `memo[set]` is 0xFF until known.
fn brute_force(neighbours: &[u128], set: usize, memo: &mut [u8]) -> u8 {
    if memo[set] != 0xFF {
        return memo[set];
    }
    let mut seen = [false; 32];
    for (v, &row) in neighbours.iter().enumerate() {
        if set >> v & 1 == 1 {
            let option = set & !(row as usize | 1 << v);
            seen[usize::from(brute_force(neighbours, option, memo))] = true;
        }
    }
    memo[set] = seen.iter().position(|&s| !s).expect("at most 20 options") as u8;
    memo[set]
}

/// The value of a graph of at most 20 vertices by the brute force.
fn brute_force_value(graph: &Graph) -> Nimber {
    let n = graph.vertices();
    assert!(n <= 20);
    let mut memo = vec![0xFFu8; 1 << n];
    u64::from(brute_force(graph.neighbours(), (1 << n) - 1, &mut memo))
}

/// The path P_n, vertices 1 to n in order.
fn path(n: u32) -> Graph {
    graph(n, &(1..n).map(|v| (v, v + 1)).collect::<Vec<_>>())
}

/// The circulant graph on n vertices with these jumps (a cycle with jumps [1]).
fn circulant(n: u32, jumps: &[u32]) -> Graph {
    let mut edges = Vec::new();
    for v in 0..n {
        for &jump in jumps {
            let (a, b) = (v, (v + jump) % n);
            let pair = (a.min(b) + 1, a.max(b) + 1);
            if a != b && !edges.contains(&pair) {
                edges.push(pair);
            }
        }
    }
    graph(n, &edges)
}

/// The complete graph K_n.
fn complete(n: u32) -> Graph {
    graph(n, &(1..=n).flat_map(|u| (u + 1..=n).map(move |w| (u, w))).collect::<Vec<_>>())
}

/// The hypercube Q_d: vertices joined when their numbers differ in one bit.
fn hypercube(d: u32) -> Graph {
    let n = 1 << d;
    let edges: Vec<(u32, u32)> = (0..n)
        .flat_map(|u| (0..d).map(move |b| (u, u ^ 1 << b)))
        .filter(|(u, w)| u < w)
        .map(|(u, w)| (u + 1, w + 1))
        .collect();
    graph(n, &edges)
}

/// The Petersen graph: an outer 5-cycle, an inner pentagram, and spokes.
fn petersen() -> Graph {
    let mut edges = Vec::new();
    for i in 0..5 {
        edges.push((i + 1, (i + 1) % 5 + 1));
        edges.push((i + 6, (i + 2) % 5 + 6));
        edges.push((i + 1, i + 6));
    }
    graph(10, &edges)
}

#[test]
fn the_engine_matches_the_brute_force_on_random_graphs() {
    let mut random = SplitMix::new(137);
    for round in 0..300 {
        let vertices = random.range(0, 20) as u32;
        let percent = random.pick(&[5, 10, 15, 25, 40, 60, 85]);
        let g = random_graph(&mut random, vertices, percent);
        assert_eq!(value(&g), brute_force_value(&g), "round {round}: {g:?}");
    }
}

#[test]
fn paths_have_the_values_of_0_137() {
    // Node Kayles on P_n is the octal game 0.137, Dawson's Chess (Winning Ways, ch. 4: period 34
    // from heap 52): choosing a vertex removes it and its neighbours, up to three in a row.
    let mut sequence = Sequence::new(Rules::code("0.137").expect("a code"));
    sequence.extend_to(129, &Budget::unlimited()).expect("no deadline");
    for n in 0..=128u32 {
        let expected = sequence.value(u64::from(n)).expect("computed");
        assert_eq!(u64::from(PATH[n as usize]), expected, "P_{n}");
        if n <= 60 {
            assert_eq!(value(&path(n)), expected, "P_{n}");
        }
    }
    assert_eq!(value(&path(128)), sequence.value(128).expect("computed"));
}

#[test]
fn a_cycle_is_worth_1_exactly_when_0_137_of_n_minus_3_is_0() {
    // Every first move on C_n leaves P_{n−3}: its only option value is 0.137(n − 3).
    for n in 3..=60u32 {
        let expected = u64::from(PATH[n as usize - 3] == 0);
        assert_eq!(value(&circulant(n, &[1])), expected, "C_{n}");
    }
    // And the rule against the search, through a relabelled cycle the rule also recognizes.
    for n in 4..=20u32 {
        assert_eq!(brute_force_value(&circulant(n, &[1])), u64::from(PATH[n as usize - 3] == 0), "C_{n}");
    }
}

#[test]
fn grids_have_their_published_values() {
    // OEIS A316632 (Brown et al., J. Integer Sequences 23 (2020), article 20.3.5): the 3×n grid
    // for n = 1 to 16; searched on the kernel (at most 64 vertices).
    let published = [2, 1, 1, 0, 3, 3, 2, 2, 2, 3, 3, 5, 2, 4, 1, 3];
    for (n, expected) in (1..).zip(published) {
        assert_eq!(value(&grid(3, n)), expected, "3x{n}");
    }
}

#[test]
fn vertex_transitive_graphs_are_worth_0_or_1() {
    // On a vertex-transitive graph every option is isomorphic to every other, so there is one
    // option value and the value is 0 or 1.
    let mut graphs = vec![petersen(), hypercube(3), hypercube(4), hypercube(5), complete(1), complete(7)];
    for n in [5, 8, 9, 12, 13, 16, 18, 20] {
        graphs.push(circulant(n, &[1, 2]));
        graphs.push(circulant(n, &[1, 3]));
        graphs.push(circulant(n, &[2, 5]));
    }
    graphs.push(circulant(40, &[1, 5, 9]));
    for g in &graphs {
        let v = value(g);
        assert!(v <= 1, "{g:?}: {v}");
        if g.vertices() <= 20 {
            assert_eq!(v, brute_force_value(g), "{g:?}");
        }
    }
    assert_eq!(value(&complete(128)), 1);
}

/// The king graph of a 2×2 board's placements: a vertex for every 2×2 square of free cells, two
/// joined when the squares overlap (their top-left cells within one king move).
fn king_graph(board: &Board) -> Graph {
    let placements: Vec<Choice> =
        board.moves().iter().map(|p| Choice { vertex: (p.row * 100 + p.column) as u32 }).collect();
    let mut edges = Vec::new();
    for (i, a) in placements.iter().enumerate() {
        for (j, b) in placements.iter().enumerate().skip(i + 1) {
            let (ra, ca, rb, cb) = (a.vertex / 100, a.vertex % 100, b.vertex / 100, b.vertex % 100);
            if ra.abs_diff(rb) <= 1 && ca.abs_diff(cb) <= 1 {
                edges.push((i as u32 + 1, j as u32 + 1));
            }
        }
    }
    graph(placements.len() as u32, &edges)
}

#[test]
fn the_2x2_games_boards_as_king_graphs_have_the_same_values() {
    let mut random = SplitMix::new(1760);
    for _ in 0..200 {
        let (height, width) = (random.range(2, 7) as usize, random.range(2, 7) as usize);
        let blocked = random.pick(&[0, 10, 25]);
        let rows = crate::testing::random_board(&mut random, height, width, blocked);
        let board = Board::new(&rows).expect("a board");
        let king = king_graph(&board);
        let expected = board.value(&mut SearchContext::in_memory()).expect("no deadline");
        assert_eq!(value(&king), expected, "{rows:?}");
    }
}

/// `rows` relabelled: vertex `u` becomes `order[u]`.
fn permuted(rows: &[u128], order: &[usize]) -> Vec<u128> {
    let mut out = vec![0u128; rows.len()];
    for (u, &row) in rows.iter().enumerate() {
        for (w, &to) in order.iter().enumerate() {
            if row >> w & 1 == 1 {
                out[order[u]] |= 1 << to;
            }
        }
    }
    out
}

/// A random order of `0..n`.
fn shuffled(random: &mut SplitMix, n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, random.index(i + 1));
    }
    order
}

/// Whether two graphs are isomorphic, by trying every relabelling (at most 8 vertices).
fn isomorphic(a: &[u128], b: &[u128]) -> bool {
    fn extend(a: &[u128], b: &[u128], order: &mut Vec<usize>, used: u32) -> bool {
        let u = order.len();
        if u == a.len() {
            return true;
        }
        for w in 0..a.len() {
            if used >> w & 1 == 0 && (0..u).all(|x| (a[u] >> x & 1) == (b[w] >> order[x] & 1)) {
                order.push(w);
                if extend(a, b, order, used | 1 << w) {
                    return true;
                }
                order.pop();
            }
        }
        false
    }
    a.len() == b.len() && extend(a, b, &mut Vec::new(), 0)
}

#[test]
fn isomorphic_graphs_share_a_key_and_a_key_is_its_graph() {
    let mut random = SplitMix::new(6);
    for _ in 0..300 {
        let n = random.range(1, 40) as u32;
        let percent = random.pick(&[10, 30, 50, 80]);
        let g = random_graph(&mut random, n, percent);
        let labelling = canonical_labelling(g.neighbours());
        assert!(labelling.canonical, "{g:?}");
        let k = key(&labelling.rows);
        let decoded = graph_of_key(&k).expect("a key");
        assert_eq!(decoded, labelling.rows);
        let edges: u32 = decoded.iter().map(|row| row.count_ones()).sum::<u32>() / 2;
        assert_eq!((decoded.len(), edges as usize), (g.vertices(), g.edges().count()));
        for _ in 0..3 {
            let order = shuffled(&mut random, n as usize);
            let relabelled = permuted(g.neighbours(), &order);
            assert_eq!(key(&canonical_labelling(&relabelled).rows), k, "{g:?} under {order:?}");
        }
    }
    // Every graph on up to 6 vertices in small samples: equal keys only for isomorphic graphs.
    let mut by_key: HashMap<Vec<u8>, Vec<u128>> = HashMap::new();
    for _ in 0..3000 {
        let n = random.range(1, 8) as u32;
        let percent = random.pick(&[20, 40, 60]);
        let g = random_graph(&mut random, n, percent);
        let k = key(&canonical_labelling(g.neighbours()).rows);
        let seen = by_key.entry(k).or_insert_with(|| g.neighbours().to_vec());
        assert!(isomorphic(seen, g.neighbours()), "{seen:?} and {g:?} share a key");
    }
    // 1044 graphs on 8 vertices up to isomorphism: a sample that meets a few hundred classes.
    assert!(by_key.len() > 300, "{}", by_key.len());
}

#[test]
fn automorphisms_keep_the_tree_small_and_a_key_past_the_tree_bound_is_still_exact() {
    // Q_7 has 128 vertices and 645 120 automorphisms: the ones found prune the tree.
    let cube = hypercube(7);
    let labelling = canonical_labelling(cube.neighbours());
    assert!(labelling.canonical && labelling.nodes < 1000, "{}", labelling.nodes);
    // Cut at one node (the first leaf only): not canonical, and the key is still the labelled graph.
    for g in [petersen(), circulant(12, &[1, 3]), cube] {
        let cut = labelling_within(g.neighbours(), 1);
        assert!(!cut.canonical);
        let decoded = graph_of_key(&key(&cut.rows)).expect("a key");
        assert_eq!(decoded, cut.rows);
        let degrees = |rows: &[u128]| {
            let mut degrees: Vec<u32> = rows.iter().map(|row| row.count_ones()).collect();
            degrees.sort_unstable();
            degrees
        };
        assert_eq!(degrees(&decoded), degrees(g.neighbours()));
    }
    assert_eq!(graph_of_key(&[3, 0xFF, 0]), None);
}

#[test]
fn validation_names_the_edge_and_the_limit() {
    let error = Graph::new(129, &[]).unwrap_err();
    assert_eq!(error.to_string(), "vertices is 129; the limit is 128");
    let error = Graph::new(3, &[(1, 2), (4, 1)]).unwrap_err();
    assert_eq!(error.field(), FieldPath::field("edges").at(1).then("from"));
    assert_eq!(error.to_string(), "edges[1].from is 4; a vertex is from 1 to vertices = 3");
    let error = Graph::new(3, &[(1, 0)]).unwrap_err();
    assert_eq!(error.to_string(), "edges[0].to is 0; a vertex is from 1 to vertices = 3");
    let error = Graph::new(3, &[(1, 2), (3, 3)]).unwrap_err();
    assert_eq!(error, GraphError::SelfLoop { edge: 1, vertex: 3 });
    assert!(error.to_string().starts_with("edges[1] is a self-loop at vertex 3"));
    let error = Graph::new(4, &[(1, 2), (2, 3), (3, 2)]).unwrap_err();
    assert_eq!(error, GraphError::DuplicateEdge { edge: 2, first: 1 });
    assert!(error.to_string().starts_with("edges[2] repeats edges[1]"), "{error}");
    let too_many = vec![(1, 2); MAX_EDGES + 1];
    assert!(Graph::new(128, &too_many).unwrap_err().to_string().contains("limit is 8128"));
    let empty = Graph::new(0, &[]).expect("the empty graph");
    assert_eq!((value(&empty), empty.moves().len()), (0, 0));
}

#[test]
fn a_move_removes_the_closed_neighbourhood_and_renumbers() {
    // A path 1–2–3–4–5 with a chord 2–5: choosing 2 removes 1, 2, 3, 5 and leaves vertex 4 alone.
    let g = graph(5, &[(1, 2), (2, 3), (3, 4), (4, 5), (5, 2)]);
    let after = g.play_unchecked(&Choice { vertex: 2 });
    assert_eq!((after.vertices(), after.edges().count()), (1, 0));
    let after = g.play_unchecked(&Choice { vertex: 4 });
    assert_eq!(after.vertices(), 2);
    assert_eq!(after.edges().collect::<Vec<_>>(), vec![(1, 2)]);
    assert_eq!(Graph::from_message(g.to_message()), Ok(g.clone()));
    assert!(!g.is_legal(&Choice { vertex: 0 }) && !g.is_legal(&Choice { vertex: 6 }));
}

#[test]
fn move_sets_match_search() {
    let mut random = SplitMix::new(8);
    for _ in 0..60 {
        let vertices = random.range(0, 10) as u32;
        let percent = random.pick(&[15, 30, 50]);
        let g = random_graph(&mut random, vertices, percent);
        assert_move_sets_match_search(&g, &[0, 1, 2]);
    }
}

#[test]
fn the_memo_shares_isomorphic_components_and_deadlines_keep_what_was_solved() {
    let mut random = SplitMix::new(12);
    let g = random_graph(&mut random, 28, 12);
    let memo = MemoryMemo::default();
    let mut first = SearchContext::new(Budget::unlimited(), &memo);
    let expected = g.value(&mut first).expect("no deadline");
    assert!(first.stats.positions_computed > 0);
    // The same graph relabelled: every component is found under its canonical key.
    let order = shuffled(&mut random, 28);
    let relabelled: Vec<(u32, u32)> =
        g.edges().map(|(u, w)| (order[u as usize - 1] as u32 + 1, order[w as usize - 1] as u32 + 1)).collect();
    let twin = graph(28, &relabelled);
    let mut second = SearchContext::new(Budget::unlimited(), &memo);
    assert_eq!(twin.value(&mut second), Ok(expected));
    assert_eq!(second.stats.positions_computed, 0);
    let lookup = |tag: GameTag, key: &[u8]| memo.get(tag, key);
    assert_eq!(twin.value_without_search(&lookup).map(|(v, _)| v), Some(expected));

    // A deadline stops a large search (the 3×20 grid, 60 vertices, searched on the kernel); a
    // retry with what it learnt computes less. A search stopped at once.
    let large = grid(3, 20);
    let mut cold = SearchContext::in_memory();
    let started = Instant::now();
    let wanted = large.value(&mut cold).expect("no deadline");
    let memo = MemoryMemo::default();
    let soon = Budget::new(Some(Instant::now() + started.elapsed() / 4), Default::default());
    let mut stopped = SearchContext::new(soon, &memo);
    assert_eq!(large.value(&mut stopped), Err(Interrupted::DeadlineExceeded));
    let mut retry = SearchContext::new(Budget::unlimited(), &memo);
    retry.learnt = std::mem::take(&mut stopped.learnt);
    assert_eq!(large.value(&mut retry), Ok(wanted));
    assert!(retry.stats.positions_computed < cold.stats.positions_computed);
    let expired = Budget::new(Some(Instant::now()), Default::default());
    let mut late = SearchContext::new(expired, &NoMemo);
    assert_eq!(random_graph(&mut random, 48, 5).value(&mut late), Err(Interrupted::DeadlineExceeded));
}

#[test]
fn best_moves_win() {
    let mut random = SplitMix::new(21);
    for _ in 0..100 {
        let vertices = random.range(1, 16) as u32;
        let percent = random.pick(&[10, 25, 50]);
        let g = random_graph(&mut random, vertices, percent);
        let (total, best) = g.best_move(&mut SearchContext::in_memory()).expect("no deadline");
        assert_eq!(total, brute_force_value(&g));
        let best = best.expect("a vertex to choose");
        if total != 0 {
            assert_eq!(brute_force_value(&g.play_unchecked(&best)), 0, "{g:?} {best:?}");
        }
    }
}
