//! Window functions (`f(…) OVER (PARTITION BY … ORDER BY … frame)`) with PostgreSQL's
//! semantics, computed over the rows a SELECT produced before its DISTINCT, ORDER BY and
//! LIMIT: every input a window reads (arguments, partition and order keys, FILTER) is a column
//! of those rows, so this module sees values only.

use crate::aggregate::AggState;
use crate::error::SqlError;
use crate::query::{order_cmp, value_key, AggFunc, AggSpec};
use crate::types::{compare, PgType, Value};

/// What a window computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WinFunc {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    Ntile,
    Lag,
    Lead,
    FirstValue,
    LastValue,
    NthValue,
    /// An aggregate over the frame.
    Agg(AggFunc),
}

impl WinFunc {
    /// The window-only function of this name (aggregates are recognised by the caller).
    pub fn by_name(name: &str) -> Option<WinFunc> {
        Some(match name {
            "row_number" => WinFunc::RowNumber,
            "rank" => WinFunc::Rank,
            "dense_rank" => WinFunc::DenseRank,
            "percent_rank" => WinFunc::PercentRank,
            "cume_dist" => WinFunc::CumeDist,
            "ntile" => WinFunc::Ntile,
            "lag" => WinFunc::Lag,
            "lead" => WinFunc::Lead,
            "first_value" => WinFunc::FirstValue,
            "last_value" => WinFunc::LastValue,
            "nth_value" => WinFunc::NthValue,
            _ => return None,
        })
    }
}

/// One end of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameEdge {
    UnboundedPreceding,
    Preceding(usize),
    CurrentRow,
    Following(usize),
    UnboundedFollowing,
}

/// The rows an aggregate or `first_value`/`last_value`/`nth_value` sees for each row:
/// `ROWS` counts rows, `RANGE` (offsets are not supported) takes the current row's peers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    pub rows: bool,
    pub start: FrameEdge,
    pub end: FrameEdge,
}

impl Frame {
    /// PostgreSQL's default: `RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW` (the whole
    /// partition when there is no ORDER BY, every row being a peer).
    pub const DEFAULT: Frame = Frame {
        rows: false,
        start: FrameEdge::UnboundedPreceding,
        end: FrameEdge::CurrentRow,
    };
}

/// A bound window call; numbers are columns of the rows it runs over.
#[derive(Debug, Clone)]
pub struct WindowSpec {
    pub func: WinFunc,
    /// The result type (an aggregate's, as for a grouped aggregate).
    pub ty: PgType,
    pub args: Vec<usize>,
    pub partition: Vec<usize>,
    /// (column, descending, nulls first).
    pub order: Vec<(usize, bool, bool)>,
    pub frame: Frame,
    /// `FILTER (WHERE …)` of an aggregate: the column holding the condition.
    pub filter: Option<usize>,
}

/// The value of window `w` for each of `rows`, in their order. `tick` is called per row
/// (statement cancellation and memory checks).
pub fn compute(
    w: &WindowSpec,
    rows: &[&[Value]],
    tick: &mut dyn FnMut() -> Result<(), SqlError>,
) -> Result<Vec<Value>, SqlError> {
    let col = |r: usize, c: usize| rows[r].get(c).cloned().unwrap_or(Value::Null);
    // Partitions in order of first appearance (the output order does not depend on it).
    let mut partitions: Vec<Vec<usize>> = Vec::new();
    let mut index: std::collections::HashMap<Vec<u8>, usize> = std::collections::HashMap::new();
    for (i, r) in rows.iter().enumerate() {
        let key: Vec<Value> = w
            .partition
            .iter()
            .map(|&c| r.get(c).cloned().unwrap_or(Value::Null))
            .collect();
        let k = value_key(&key);
        match index.get(&k) {
            Some(&p) => partitions[p].push(i),
            None => {
                index.insert(k, partitions.len());
                partitions.push(vec![i]);
            }
        }
    }
    let mut out = vec![Value::Null; rows.len()];
    for mut part in partitions {
        // A stable sort: rows with equal keys keep the order they came in.
        part.sort_by(|&a, &b| {
            w.order
                .iter()
                .map(|&(c, desc, nf)| order_cmp(&col(a, c), &col(b, c), desc, nf))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let peers = |a: usize, b: usize| {
            w.order
                .iter()
                .all(|&(c, ..)| compare(&col(a, c), &col(b, c)).is_eq())
        };
        // For each position: the first and last position of its peer group.
        let n = part.len();
        let mut group_start = vec![0; n];
        let mut group_end = vec![0; n];
        let mut dense = vec![0i64; n];
        let mut g = 0i64;
        for p in 0..n {
            if p > 0 && peers(part[p - 1], part[p]) {
                group_start[p] = group_start[p - 1];
                dense[p] = dense[p - 1];
            } else {
                group_start[p] = p;
                g += 1;
                dense[p] = g;
            }
        }
        for p in (0..n).rev() {
            group_end[p] = if p + 1 < n && group_start[p + 1] == group_start[p] {
                group_end[p + 1]
            } else {
                p
            };
        }
        // Positions computed wide: offsets may be as large as a bigint.
        let frame_of = |p: usize| -> Option<(usize, usize)> {
            let (pos, len) = (p as i128, n as i128);
            let start = match w.frame.start {
                FrameEdge::UnboundedPreceding => 0,
                FrameEdge::Preceding(k) if w.frame.rows => pos - k as i128,
                FrameEdge::CurrentRow if !w.frame.rows => group_start[p] as i128,
                FrameEdge::CurrentRow | FrameEdge::Preceding(_) => pos,
                FrameEdge::Following(k) => pos + k as i128,
                FrameEdge::UnboundedFollowing => len,
            }
            .max(0);
            let end = match w.frame.end {
                FrameEdge::UnboundedFollowing => len - 1,
                FrameEdge::Following(k) => (pos + k as i128).min(len - 1),
                FrameEdge::CurrentRow if !w.frame.rows => group_end[p] as i128,
                FrameEdge::CurrentRow => pos,
                FrameEdge::Preceding(k) => pos - k as i128,
                FrameEdge::UnboundedPreceding => -1,
            };
            (end >= start && start < len).then_some((start as usize, end as usize))
        };
        let arg = |p: usize, i: usize| w.args.get(i).map_or(Value::Null, |&c| col(part[p], c));
        match w.func {
            WinFunc::Agg(func) => aggregate(w, func, &part, rows, &frame_of, &mut out, tick)?,
            _ => {
                for p in 0..n {
                    tick()?;
                    let v = match w.func {
                        WinFunc::RowNumber => Value::Int(p as i64 + 1),
                        WinFunc::Rank => Value::Int(group_start[p] as i64 + 1),
                        WinFunc::DenseRank => Value::Int(dense[p]),
                        WinFunc::PercentRank => Value::Float(if n > 1 {
                            group_start[p] as f64 / (n - 1) as f64
                        } else {
                            0.0
                        }),
                        WinFunc::CumeDist => Value::Float((group_end[p] + 1) as f64 / n as f64),
                        WinFunc::Ntile => ntile(&arg(p, 0), p, n)?,
                        WinFunc::Lag | WinFunc::Lead => {
                            let offset = match w.args.get(1) {
                                Some(_) => arg(p, 1),
                                None => Value::Int(1),
                            };
                            match offset {
                                Value::Int(k) => {
                                    let target = if w.func == WinFunc::Lag {
                                        p as i128 - i128::from(k)
                                    } else {
                                        p as i128 + i128::from(k)
                                    };
                                    if (0..n as i128).contains(&target) {
                                        arg(target as usize, 0)
                                    } else {
                                        arg(p, 2)
                                    }
                                }
                                _ => Value::Null,
                            }
                        }
                        WinFunc::FirstValue => frame_of(p).map_or(Value::Null, |(s, _)| arg(s, 0)),
                        WinFunc::LastValue => frame_of(p).map_or(Value::Null, |(_, e)| arg(e, 0)),
                        WinFunc::NthValue => match arg(p, 1) {
                            Value::Int(k) if k <= 0 => {
                                return Err(SqlError::WindowArgument {
                                    function: "nth_value",
                                })
                            }
                            Value::Int(k) => match frame_of(p) {
                                Some((s, e)) if s as i128 + i128::from(k) - 1 <= e as i128 => {
                                    arg(s + k as usize - 1, 0)
                                }
                                _ => Value::Null,
                            },
                            _ => Value::Null,
                        },
                        WinFunc::Agg(_) => Value::Null,
                    };
                    out[part[p]] = v;
                }
            }
        }
    }
    Ok(out)
}

/// `ntile(k)` for position `p` of `n` rows: PostgreSQL's buckets, the first `n % k` one row
/// larger.
fn ntile(k: &Value, p: usize, n: usize) -> Result<Value, SqlError> {
    let k = match k {
        Value::Int(k) if *k <= 0 => return Err(SqlError::WindowArgument { function: "ntile" }),
        Value::Int(k) => *k as usize,
        _ => return Ok(Value::Null),
    };
    let (size, larger) = (n / k, n % k);
    let bucket = if p < larger * (size + 1) {
        p / (size + 1)
    } else {
        larger + (p - larger * (size + 1)) / size.max(1)
    };
    Ok(Value::Int(bucket as i64 + 1))
}

/// An aggregate over each row's frame: one pass when every frame starts at the partition's
/// first row (the running total of the default frame), else each frame on its own.
fn aggregate(
    w: &WindowSpec,
    func: AggFunc,
    part: &[usize],
    rows: &[&[Value]],
    frame_of: &dyn Fn(usize) -> Option<(usize, usize)>,
    out: &mut [Value],
    tick: &mut dyn FnMut() -> Result<(), SqlError>,
) -> Result<(), SqlError> {
    let spec = AggSpec {
        func,
        args: Vec::new(),
        distinct: false,
        ty: w.ty,
        order: Vec::new(),
        filter: None,
    };
    let col = |r: usize, c: usize| rows[r].get(c).cloned().unwrap_or(Value::Null);
    let feed = |state: &mut AggState, r: usize| -> Result<(), SqlError> {
        if let Some(f) = w.filter {
            if col(r, f) != Value::Bool(true) {
                return Ok(());
            }
        }
        if func == AggFunc::CountStar {
            state.count_row();
            return Ok(());
        }
        let v = w.args.first().map_or(Value::Null, |&c| col(r, c));
        if v.is_null() && !AggState::takes_nulls(func) {
            return Ok(());
        }
        let sep = match func {
            AggFunc::StringAgg | AggFunc::JsonObjectAgg => {
                Some(w.args.get(1).map_or(Value::Null, |&c| col(r, c)))
            }
            _ => None,
        };
        state.feed(v, sep, Vec::new())
    };
    let running = w.frame.start == FrameEdge::UnboundedPreceding;
    let mut state = AggState::new(&spec);
    let mut fed = 0usize;
    // The value for the last frame computed, reused while the frame stays the same (peers).
    let mut last: Option<((usize, usize), Value)> = None;
    for p in 0..part.len() {
        tick()?;
        let frame = frame_of(p);
        let value = match frame {
            None => AggState::new(&spec).finish()?,
            Some(f) => match &last {
                Some((lf, v)) if *lf == f => v.clone(),
                _ => {
                    let v = if running {
                        while fed <= f.1 {
                            feed(&mut state, part[fed])?;
                            fed += 1;
                        }
                        state.clone().finish()?
                    } else {
                        let mut s = AggState::new(&spec);
                        for &r in &part[f.0..=f.1] {
                            feed(&mut s, r)?;
                        }
                        s.finish()?
                    };
                    last = Some((f, v.clone()));
                    v
                }
            },
        };
        out[part[p]] = value;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(vals: &[i64]) -> Vec<Vec<Value>> {
        vals.iter().map(|v| vec![Value::Int(*v)]).collect()
    }

    fn run(w: &WindowSpec, rows: &[Vec<Value>]) -> Vec<Value> {
        let rows: Vec<&[Value]> = rows.iter().map(Vec::as_slice).collect();
        compute(w, &rows, &mut || Ok(())).expect("window")
    }

    fn spec(func: WinFunc, args: Vec<usize>, frame: Frame) -> WindowSpec {
        WindowSpec {
            func,
            ty: PgType::Int8,
            args,
            partition: vec![],
            order: vec![(0, false, false)],
            frame,
            filter: None,
        }
    }

    #[test]
    fn ranks_share_peers_and_ntile_fills_leading_buckets() {
        let rows = ints(&[10, 20, 20, 30, 40]);
        let rank = run(&spec(WinFunc::Rank, vec![], Frame::DEFAULT), &rows);
        assert_eq!(rank, ints(&[1, 2, 2, 4, 5]).concat());
        let dense = run(&spec(WinFunc::DenseRank, vec![], Frame::DEFAULT), &rows);
        assert_eq!(dense, ints(&[1, 2, 2, 3, 4]).concat());
        let with_k: Vec<Vec<Value>> = rows
            .iter()
            .map(|r| vec![r[0].clone(), Value::Int(3)])
            .collect();
        let tiles = run(&spec(WinFunc::Ntile, vec![1], Frame::DEFAULT), &with_k);
        assert_eq!(tiles, ints(&[1, 1, 2, 2, 3]).concat());
    }

    #[test]
    fn running_and_sliding_sums_follow_their_frames() {
        let rows = ints(&[1, 2, 2, 4]);
        let sum = |frame| run(&spec(WinFunc::Agg(AggFunc::Sum), vec![0], frame), &rows);
        // The default frame ends at the last peer: both 2s see 1 + 2 + 2.
        assert_eq!(sum(Frame::DEFAULT), ints(&[1, 5, 5, 9]).concat());
        let sliding = Frame {
            rows: true,
            start: FrameEdge::Preceding(1),
            end: FrameEdge::Following(1),
        };
        assert_eq!(sum(sliding), ints(&[3, 5, 8, 6]).concat());
        let empty = Frame {
            rows: true,
            start: FrameEdge::Following(1),
            end: FrameEdge::Following(2),
        };
        let tail = sum(empty);
        assert_eq!(tail[3], Value::Null);
        assert_eq!(tail[0], Value::Int(4));
    }
}
