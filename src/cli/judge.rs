//! The original problems' input and output formats over the same engine, so that the engine can be
//! checked against the original judges: read the whole standard input, print exactly what the
//! original problem expects (`nimber judge`). It names the library as `nimber::`, so that
//! `benches/tetris.rs` can include this file to time the judge in process.

use nimber::games::{
    cutting, describe, diagonal_walk, reclamation, stone_boxes, tetris, FieldPath, Game, Interrupted, Outcome,
    SearchContext, SetupError, Step, Value,
};

/// The original problems the judge command speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Problem {
    /// POJ 2311 "Cutting Game": lines `W H` until end of input; prints WIN or LOSE.
    Cutting,
    /// HDU 1729 "Stone Game": `n`, then n lines `s c`, until n = 0 or end of input; prints `Case k:` and Yes or No.
    StoneBoxes,
    /// Codeforces 335C "More Reclamation": `r n`, then n lines `ri ci`; prints WIN or LOSE.
    Reclamation,
    /// HDU 1760 "A New Tetris Game": `N M` and N rows of 0/1, until end of input; prints Yes or No.
    Tetris,
    /// HDU 5708 "Alice and Bob": T, then per case `Q K` and Q lines `n m`; prints Alice or Bob.
    DiagonalWalk,
}

/// Why an input could not be judged.
#[derive(Debug)]
pub enum JudgeError {
    /// The input is not in the problem's format.
    Malformed(String),
    /// The solve stopped (only with a deadline or cancellation, which the CLI never sets).
    Interrupted(Interrupted),
}

impl std::fmt::Display for JudgeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JudgeError::Malformed(message) => write!(f, "malformed input: {message}"),
            JudgeError::Interrupted(why) => write!(f, "the solve stopped: {why:?}"),
        }
    }
}

impl std::error::Error for JudgeError {}

impl From<Interrupted> for JudgeError {
    fn from(why: Interrupted) -> Self {
        JudgeError::Interrupted(why)
    }
}

fn malformed(message: impl std::fmt::Display) -> JudgeError {
    JudgeError::Malformed(message.to_string())
}

impl Problem {
    /// The name of a field of this problem's position in the problem's own words: the letters of
    /// its input format (`W`, `s`, `ri`, ...) and which item, counted from 1.
    fn name(self, path: &FieldPath) -> String {
        use Step::{Field, Index};
        match (self, &path.0[..]) {
            (Problem::Cutting, [Field("pieces"), Index(_), Field("width")]) => "W".into(),
            (Problem::Cutting, [Field("pieces"), Index(_), Field("height")]) => "H".into(),
            (Problem::StoneBoxes, [Field("boxes")]) => "n".into(),
            (Problem::StoneBoxes, [Field("boxes"), Index(i), Field("stones")]) => format!("c of box {}", i + 1),
            (Problem::StoneBoxes, [Field("boxes"), Index(i), Field("capacity")]) => format!("s of box {}", i + 1),
            (Problem::Reclamation, [Field("rows")]) => "r".into(),
            (Problem::Reclamation, [Field("reclaimed")]) => "n".into(),
            (Problem::Reclamation, [Field("reclaimed"), Index(i)]) => format!("cell {}", i + 1),
            (Problem::Reclamation, [Field("reclaimed"), Index(i), Field("row")]) => format!("ri of cell {}", i + 1),
            (Problem::Reclamation, [Field("reclaimed"), Index(i), Field("column")]) => format!("ci of cell {}", i + 1),
            (Problem::Tetris, [Field("rows")]) => "the board".into(),
            (Problem::Tetris, [Field("rows"), Index(r)]) => format!("board row {}", r + 1),
            (Problem::DiagonalWalk, [Field("rows")]) => "n".into(),
            (Problem::DiagonalWalk, [Field("columns")]) => "m".into(),
            (Problem::DiagonalWalk, [Field("step")]) => "K".into(),
            _ => path.to_string(),
        }
    }

    /// The input error of a position this problem's input describes, in the problem's own words.
    fn refused(self, error: &dyn SetupError) -> JudgeError {
        JudgeError::Malformed(describe(error, &|path| self.name(path)))
    }
}

/// Whitespace-separated tokens of an input.
struct Tokens<'a>(std::str::SplitWhitespace<'a>);

impl<'a> Tokens<'a> {
    fn next_str(&mut self) -> Option<&'a str> {
        self.0.next()
    }

    fn next_u64(&mut self, what: &str) -> Result<Option<u64>, JudgeError> {
        self.next_str()
            .map(|token| token.parse().map_err(|_| malformed(format!("{what}: `{token}` is not a number"))))
            .transpose()
    }

    fn expect_u64(&mut self, what: &str) -> Result<u64, JudgeError> {
        self.next_u64(what)?.ok_or_else(|| malformed(format!("{what}: input ended early")))
    }
}

/// Whether the player to move wins `position`.
fn first_player_wins<G: Game>(position: &G, context: &mut SearchContext) -> Result<bool, JudgeError> {
    Ok(position.value(context)?.outcome() == Outcome::NextPlayerWins)
}

/// Judges `input` as `problem` and returns the exact output.
pub fn judge(problem: Problem, input: &str, context: &mut SearchContext) -> Result<String, JudgeError> {
    let mut tokens = Tokens(input.split_whitespace());
    let mut output = String::new();
    let mut line = |text: &str| {
        output.push_str(text);
        output.push('\n');
    };
    match problem {
        Problem::Cutting => {
            while let Some(width) = tokens.next_u64("W")? {
                let height = tokens.expect_u64("H")?;
                let paper =
                    cutting::Paper::new(vec![cutting::Piece { width, height }]).map_err(|e| problem.refused(&e))?;
                line(if first_player_wins(&paper, context)? { "WIN" } else { "LOSE" });
            }
        }
        Problem::StoneBoxes => {
            let mut case = 0;
            while let Some(count) = tokens.next_u64("n")? {
                if count == 0 {
                    break;
                }
                let boxes = (0..count)
                    .map(|_| {
                        let capacity = tokens.expect_u64("s")?;
                        let stones = tokens.expect_u64("c")?;
                        Ok(stone_boxes::StoneBox { capacity, stones })
                    })
                    .collect::<Result<Vec<_>, JudgeError>>()?;
                let boxes = stone_boxes::Boxes::new(boxes).map_err(|e| problem.refused(&e))?;
                case += 1;
                line(&format!("Case {case}:"));
                line(if first_player_wins(&boxes, context)? { "Yes" } else { "No" });
            }
        }
        Problem::Reclamation => {
            while let Some(rows) = tokens.next_u64("r")? {
                let count = tokens.expect_u64("n")?;
                let cells = (0..count)
                    .map(|_| {
                        let row = tokens.expect_u64("ri")?;
                        let column = tokens.expect_u64("ci")?;
                        Ok(reclamation::Cell { row, column })
                    })
                    .collect::<Result<Vec<_>, JudgeError>>()?;
                let river = reclamation::River::new(rows, cells).map_err(|e| problem.refused(&e))?;
                line(if first_player_wins(&river, context)? { "WIN" } else { "LOSE" });
            }
        }
        Problem::Tetris => {
            while let Some(height) = tokens.next_u64("N")? {
                let _width = tokens.expect_u64("M")?;
                let rows = (0..height)
                    .map(|_| {
                        tokens.next_str().map(str::to_string).ok_or_else(|| malformed("board row: input ended early"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let board = tetris::Board::new(&rows).map_err(|e| problem.refused(&e))?;
                line(if first_player_wins(&board, context)? { "Yes" } else { "No" });
            }
        }
        Problem::DiagonalWalk => {
            let cases = tokens.expect_u64("T")?;
            for _ in 0..cases {
                let queries = tokens.expect_u64("Q")?;
                let step = tokens.expect_u64("K")?;
                for _ in 0..queries {
                    let rows = tokens.expect_u64("n")?;
                    let columns = tokens.expect_u64("m")?;
                    let walk = diagonal_walk::Walk::new(rows, columns, step, 1, 1).map_err(|e| problem.refused(&e))?;
                    line(if first_player_wins(&walk, context)? { "Alice" } else { "Bob" });
                }
            }
        }
    }
    Ok(output)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(problem: Problem, input: &str) -> String {
        judge(problem, input, &mut SearchContext::in_memory()).unwrap()
    }

    #[test]
    fn cutting_sample() {
        assert_eq!(run(Problem::Cutting, "2 2\n3 2\n4 2\n"), "LOSE\nLOSE\nWIN\n");
    }

    #[test]
    fn stone_boxes_sample() {
        // HDU 1729 sample input and output.
        assert_eq!(run(Problem::StoneBoxes, "3\n2 0\n3 3\n6 2\n2\n6 3\n6 3\n0\n"), "Case 1:\nYes\nCase 2:\nNo\n");
    }

    #[test]
    fn reclamation_samples() {
        assert_eq!(run(Problem::Reclamation, "3 1\n1 1\n"), "WIN\n");
        assert_eq!(run(Problem::Reclamation, "12 2\n4 1\n8 1\n"), "WIN\n");
        assert_eq!(run(Problem::Reclamation, "1 1\n1 2\n"), "LOSE\n");
    }

    #[test]
    fn tetris_sample() {
        let input = "4 4\n0000\n0000\n0000\n0000\n4 4\n0000\n0010\n0100\n0000\n";
        assert_eq!(run(Problem::Tetris, input), "Yes\nNo\n");
    }

    #[test]
    fn diagonal_walk_follows_the_seed_rule() {
        let mut input = String::from("3\n");
        let mut expected = String::new();
        for k in 1..=3u64 {
            input.push_str(&format!("64 {k}\n"));
            for n in 1..=8u64 {
                for m in 1..=8u64 {
                    input.push_str(&format!("{n} {m}\n"));
                    expected.push_str(if nimber::testing::hdu5708_first_player_wins(n, m, k) {
                        "Alice\n"
                    } else {
                        "Bob\n"
                    });
                }
            }
        }
        assert_eq!(run(Problem::DiagonalWalk, &input), expected);
    }

    #[test]
    fn invalid_positions_are_named_in_the_problems_words() {
        let error = |problem, input| judge(problem, input, &mut SearchContext::in_memory()).unwrap_err().to_string();
        assert_eq!(error(Problem::Cutting, "2 2\n0 5\n"), "malformed input: W is 0; it must be at least 1");
        assert_eq!(
            error(Problem::StoneBoxes, "2\n3 1\n10 12\n"),
            "malformed input: c of box 2 (12) exceeds capacity (10)"
        );
        assert_eq!(
            error(Problem::Reclamation, "9 3\n4 1\n1 2\n4 1\n"),
            "malformed input: cell 3 (row 4, column 1) repeats cell 1"
        );
        assert_eq!(error(Problem::Reclamation, "5 1\n2 3\n"), "malformed input: ci of cell 1 (3) must be 1 or 2");
        assert_eq!(
            error(Problem::Tetris, "2 3\n000\n0x0\n"),
            "malformed input: board row 2 column 2 is 'x'; expected '0' or '.' (free), '1' or '#' (blocked)"
        );
        assert_eq!(error(Problem::DiagonalWalk, "1\n1 0\n3 3\n"), "malformed input: K must be at least 1");
    }

    #[test]
    fn malformed_input_is_an_error() {
        assert!(judge(Problem::Cutting, "2 x", &mut SearchContext::in_memory()).is_err());
        assert!(judge(Problem::StoneBoxes, "2\n3 1\n", &mut SearchContext::in_memory()).is_err());
    }
}
