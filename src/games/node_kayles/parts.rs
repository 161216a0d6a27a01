//! What every search of Node Kayles does to a set of vertices of a graph (the graph as rows of
//! neighbour bits): split it into connected components, and value a component by rule when it is
//! complete, a path or a cycle.

use super::PATH;

/// The connected components of `set` in the graph of `rows`, as bits, lowest vertex first.
pub fn components(rows: &[u128], mut set: u128) -> impl Iterator<Item = u128> + '_ {
    std::iter::from_fn(move || {
        if set == 0 {
            return None;
        }
        let mut part = set & set.wrapping_neg();
        let mut frontier = part;
        while frontier != 0 {
            let mut reached = 0;
            while frontier != 0 {
                reached |= rows[frontier.trailing_zeros() as usize];
                frontier &= frontier - 1;
            }
            frontier = reached & set & !part;
            part |= frontier;
        }
        set &= !part;
        Some(part)
    })
}

/// The value of a connected graph of `k` vertices, `edges` edges and largest degree `largest`, when
/// a rule gives it: K_k (every move removes everything) is worth 1; a path P_k (degrees at most 2,
/// k − 1 edges) is worth [`PATH`]`[k]`; a cycle C_k (degrees 2, k edges, k ≥ 4, as K_3 is
/// complete) is worth 1 exactly when `PATH[k − 3]` is 0, since every move leaves P_{k−3}.
pub fn value_by_rule(k: usize, edges: usize, largest: usize) -> Option<u8> {
    if edges == k * (k - 1) / 2 {
        Some(1)
    } else if largest <= 2 && edges + 1 == k {
        Some(PATH[k])
    } else if largest <= 2 && edges == k {
        Some(u8::from(PATH[k - 3] == 0))
    } else {
        None
    }
}

/// The value by rule ([`value_by_rule`]) of the component `part` of the graph of `rows`.
pub fn value_of_part(rows: &[u128], part: u128) -> Option<u8> {
    let (mut degrees, mut largest, mut rest) = (0, 0, part);
    while rest != 0 {
        let degree = (rows[rest.trailing_zeros() as usize] & part).count_ones() as usize;
        degrees += degree;
        largest = largest.max(degree);
        rest &= rest - 1;
    }
    value_by_rule(part.count_ones() as usize, degrees / 2, largest)
}
