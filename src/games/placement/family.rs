//! The families of boards a job tabulates: every full board in a range of sizes, or every board
//! obtained from one by blocking a few of its free cells, each board once up to the symmetries of
//! its rectangle (with the count of boards it stands for).

use std::collections::hash_map::{Entry, HashMap};

use super::bits::{BoardPoints, PointSet};
use super::{Board, Piece};

/// The most boards of a sub-board family (every choice of blocked cells, before deduplication).
pub const MAX_SUB_BOARDS: u64 = 1_000_000;

/// A family of boards of the placement game `P`.
#[derive(Clone, Debug)]
pub enum BoardFamily<P> {
    /// Every full board with rows and columns in these ranges (`min..=max`, each from 1 to
    /// [`MAX_SIDE`](super::MAX_SIDE), at most [`MAX_CELLS`](super::MAX_CELLS) cells).
    FullBoards {
        /// The fewest and most rows.
        rows: (usize, usize),
        /// The fewest and most columns.
        columns: (usize, usize),
    },
    /// Every board obtained from `board` by blocking up to `max_blocked` of its free cells.
    SubBoards {
        /// The original board (boxed: a board is half a kilobyte).
        board: Box<Board<P>>,
        /// The most cells to block (at most its free cells).
        max_blocked: usize,
    },
}

/// One board of a family, as its table shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyBoard<P> {
    /// The board.
    pub board: Board<P>,
    /// Cells blocked beyond the original board.
    pub blocked: u32,
    /// How many boards of the family this one stands for (its images under the symmetries of its
    /// rectangle).
    pub count: u64,
    /// Whether the table shows the board itself (a sub-board) or only its size (a full board).
    pub shown: bool,
}

impl<P: Piece> BoardFamily<P> {
    /// The family of the boards obtained from `board` by blocking up to `max_blocked` of its free
    /// cells; the problem (naming the count and the limit) when it has more than
    /// [`MAX_SUB_BOARDS`] boards.
    pub fn sub_boards(board: Board<P>, max_blocked: usize) -> Result<Self, String> {
        let free = free_cells(&board).len();
        let blocked = max_blocked.min(free);
        match family_size(free, blocked) {
            Some(size) if size <= MAX_SUB_BOARDS => {
                Ok(BoardFamily::SubBoards { board: Box::new(board), max_blocked: blocked })
            }
            size => Err(format!(
                "has {} boards (blocking up to {max_blocked} of {free} free cells); the limit is {MAX_SUB_BOARDS}",
                size.map_or("more than 2^64".to_string(), |size| size.to_string()),
            )),
        }
    }

    /// The family's boards, in the table's order: always the same for the same family, so that a
    /// resumed job finds its finished boards by index. Full boards by rows, then columns;
    /// sub-boards by number of cells blocked, then by the blocked cells in row-major lexicographic
    /// order.
    pub fn boards(&self) -> Vec<FamilyBoard<P>> {
        match self {
            BoardFamily::FullBoards { rows, columns } => (rows.0..=rows.1)
                .flat_map(|height| (columns.0..=columns.1).map(move |width| (height, width)))
                .filter_map(|(height, width)| Board::full(height, width).ok())
                .map(|board| FamilyBoard { board, blocked: 0, count: 1, shown: false })
                .collect(),
            BoardFamily::SubBoards { board, max_blocked } => sub_boards(board, *max_blocked),
        }
    }
}

/// How many ways there are to block up to `max_blocked` of `free` cells: the sum of the binomials
/// C(free, k) for k ≤ max_blocked, exact while it fits 64 bits (`None` past that).
fn family_size(free: usize, max_blocked: usize) -> Option<u64> {
    let (mut total, mut ways) = (0u128, 1u128);
    for k in 0..=max_blocked.min(free) {
        total = total.checked_add(ways)?;
        // C(free, k + 1) = C(free, k) · (free − k) / (k + 1), exact at every step.
        ways = ways.checked_mul((free - k) as u128)? / (k as u128 + 1);
    }
    u64::try_from(total).ok()
}

/// The free cells of `board`, 0-based `(row, column)`, row by row.
fn free_cells<P: Piece>(board: &Board<P>) -> Vec<(usize, usize)> {
    (0..board.height)
        .flat_map(|r| (0..board.width).map(move |c| (r, c)))
        .filter(|&(r, c)| board.free[r] >> c & 1 == 1)
        .collect()
}

/// The class of `board` under the symmetries of its rectangle: the least image of its free cells
/// (as points, stored turned when it has more rows than [`BoardPoints`] holds, which a symmetry of
/// the rectangle commutes with). Boards of one family share their size, so equal classes are
/// exactly boards one symmetry maps onto the other.
fn class<P: Piece>(board: &Board<P>) -> BoardPoints {
    let (height, width) = (board.height, board.width);
    let cells = if height > BoardPoints::ROWS as usize {
        BoardPoints::from_rows((0..width).map(|c| (0..height).fold(0, |row, r| row | (board.free[r] >> c & 1) << r)))
    } else {
        BoardPoints::from_rows(board.free[..height].iter().copied())
    };
    let (height, width) = if height > BoardPoints::ROWS as usize { (width, height) } else { (height, width) };
    cells.least_image_in_rectangle(height, width)
}

/// Every board obtained by blocking up to `max_blocked` free cells of `board`: by number of cells
/// blocked, then by the blocked cells in row-major lexicographic order; a board symmetric to an
/// earlier one adds to the earlier one's count instead.
fn sub_boards<P: Piece>(board: &Board<P>, max_blocked: usize) -> Vec<FamilyBoard<P>> {
    let free = free_cells(board);
    let mut index_of: HashMap<BoardPoints, usize> = HashMap::new();
    let mut boards: Vec<FamilyBoard<P>> = Vec::new();
    for blocked in 0..=max_blocked.min(free.len()) {
        let mut chosen: Vec<usize> = (0..blocked).collect();
        loop {
            let mut sub = board.clone();
            for &cell in &chosen {
                let (r, c) = free[cell];
                sub.free[r] &= !(1 << c);
            }
            match index_of.entry(class(&sub)) {
                Entry::Occupied(entry) => boards[*entry.get()].count += 1,
                Entry::Vacant(entry) => {
                    entry.insert(boards.len());
                    boards.push(FamilyBoard { board: sub, blocked: blocked as u32, count: 1, shown: true });
                }
            }
            if !next_combination(&mut chosen, free.len()) {
                break;
            }
        }
    }
    boards
}

/// Advances `chosen` (increasing indices below `n`) to the next combination in lexicographic order;
/// false after the last one.
fn next_combination(chosen: &mut [usize], n: usize) -> bool {
    let k = chosen.len();
    let Some(i) = (0..k).rev().find(|&i| chosen[i] < n - k + i) else {
        return false;
    };
    chosen[i] += 1;
    for j in i + 1..k {
        chosen[j] = chosen[j - 1] + 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::cram::Domino;
    use crate::games::tetris::Square;

    fn board<P: Piece>(rows: &[&str]) -> Board<P> {
        Board::new(&rows.iter().map(|row| row.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn family_sizes_count_every_choice_of_blocked_cells() {
        assert_eq!(family_size(4, 0), Some(1));
        assert_eq!(family_size(4, 2), Some(1 + 4 + 6));
        assert_eq!(family_size(4, 4), Some(16));
        // A 16×16 board with up to 3 blocked: 1 + 256 + 32 640 + 2 763 520 boards.
        assert_eq!(family_size(256, 3), Some(2_796_417));
        assert_eq!(family_size(64, 63), Some(u64::MAX), "2^64 − 1 boards");
        assert_eq!(family_size(64, 64), None, "2^64 boards");
        assert_eq!(family_size(65, 65), None, "2^65 boards");
        assert_eq!(family_size(256, 128), None);
    }

    #[test]
    fn sub_boards_of_a_square_are_deduplicated_by_its_eight_symmetries() {
        let boards = sub_boards(&board::<Square>(&["000", "000", "000"]), 1);
        // The full board, then one blocked cell: a corner (4), an edge middle (4), the centre (1).
        let counts: Vec<(u32, u64)> = boards.iter().map(|board| (board.blocked, board.count)).collect();
        assert_eq!(counts, vec![(0, 1), (1, 4), (1, 4), (1, 1)]);
        assert_eq!(Some(boards.iter().map(|board| board.count).sum::<u64>()), family_size(9, 1));
    }

    #[test]
    fn sub_boards_of_a_rectangle_use_its_four_symmetries() {
        let boards = sub_boards(&board::<Domino>(&["000", "000"]), 1);
        // One blocked cell of a 2×3 board: a corner (4) or a middle of a long side (2).
        let counts: Vec<u64> = boards.iter().map(|board| board.count).collect();
        assert_eq!(counts, vec![1, 4, 2]);
        // Two blocked cells: a pair along a row is never the transpose of a pair down a column.
        let two = sub_boards(&board::<Domino>(&["000", "000"]), 2);
        assert_eq!(two.iter().map(|board| board.count).sum::<u64>(), 1 + 6 + 15);
    }

    #[test]
    fn every_sub_board_count_adds_up_to_the_family_on_tall_boards_too() {
        let original = board::<Square>(&["0010", "0000", "0100"]);
        let boards = sub_boards(&original, 3);
        assert_eq!(Some(boards.iter().map(|board| board.count).sum::<u64>()), family_size(10, 3));
        assert!(boards.iter().all(|board| board.board.height() == 3 && board.shown));
        // 20 rows of 2 (stored turned): one blocked cell is a corner (4 of them) or one of 9
        // classes of 4 cells along the sides.
        let tall = sub_boards(&board::<Domino>(&["00"; 20]), 1);
        let counts: Vec<u64> = tall.iter().map(|board| board.count).collect();
        assert_eq!(counts, [vec![1], vec![4; 10]].concat());
    }

    #[test]
    fn families_over_the_limit_say_how_many_boards_they_have() {
        let square = "0".repeat(16);
        let problem = BoardFamily::sub_boards(board::<Domino>(&[square.as_str(); 16]), 3).unwrap_err();
        assert!(problem.starts_with("has 2796417 boards") && problem.contains("1000000"), "{problem}");
        assert!(BoardFamily::sub_boards(board::<Domino>(&[square.as_str(); 16]), 2).is_ok());
    }
}
