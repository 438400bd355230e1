//! Which recording each gpumon Parquet input belongs to (its host and `gpumon.start`, shared by the
//! pieces of one `record` run): inputs that hold several recordings of one host are numbered, so
//! readers say so and keep their phases apart instead of reading them as one run.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};

use crate::gpumon::parquet::parquet_meta;
use crate::input::{Input, Kind};
use gpumon_schema::catalog::Field;
use gpumon_schema::{JobId, RecordingOf, cols};

/// The footer's key/value pairs of a gpumon Parquet input (empty for other kinds).
fn footer_values(input: &Input) -> HashMap<String, String> {
    if input.kind != Kind::Parquet {
        return HashMap::new();
    }
    let Ok((_, meta)) = parquet_meta(input) else { return HashMap::new() };
    let kv = meta.metadata().file_metadata().key_value_metadata();
    kv.into_iter()
        .flatten()
        .filter(|k| k.key.starts_with("gpumon."))
        .filter_map(|k| Some((k.key.clone(), k.value.clone()?)))
        .collect()
}

/// The recording an input belongs to, from its footer: host and start (None when gpumon did not
/// write it, or it is not Parquet: CSV pieces carry no start).
fn recording_of(input: &Input) -> Option<RecordingOf> {
    let mut kv = footer_values(input);
    let start = kv.remove("gpumon.start")?;
    Some(RecordingOf {
        host: kv.remove("gpumon.hostname").unwrap_or_default(),
        start,
        command: kv.remove("gpumon.command").unwrap_or_default(),
        ordinal: None,
    })
}

/// The job a gpumon Parquet input's recording belongs to, from its footer (`gpumon.job.id`, ...);
/// None for other inputs and recordings of no job.
pub fn job_of(input: &Input) -> Option<JobId> {
    let kv = footer_values(input);
    JobId::from_footer(|k| kv.get(k).map(String::as_str))
}

/// Read each input's recording from its footer once, into `Input::recording`, and number them:
/// where one host has inputs of more than one recording, each gets the ordinal of its recording
/// (1, 2, ...); inputs of a host with a single recording keep the ordinal None.
pub fn number_recordings(inputs: &mut [Input]) {
    for i in inputs.iter_mut() {
        i.recording = recording_of(i);
    }
    let mut starts: HashMap<String, Vec<String>> = HashMap::new();
    for r in inputs.iter().filter_map(|i| i.recording.as_ref()) {
        let s = starts.entry(r.host.clone()).or_default();
        if !s.contains(&r.start) {
            s.push(r.start.clone());
        }
    }
    for r in inputs.iter_mut().filter_map(|i| i.recording.as_mut()) {
        let s = starts.get(&r.host).filter(|s| s.len() > 1);
        r.ordinal = s.and_then(|s| s.iter().position(|x| *x == r.start)).map(|p| p as u32 + 1);
    }
}

/// The recording of an input as the footer says, numbered when [`number_recordings`] read it.
pub fn recording(input: &Input) -> Option<RecordingOf> {
    input.recording.clone().or_else(|| recording_of(input))
}

/// The label a phase of recording `n` is shown under when the inputs hold several recordings: the
/// first recording's phases keep their labels, a later one's get ` (recording N)`.
pub(crate) fn phase_label(label: &str, n: u32) -> String {
    if n > 1 { format!("{label} (recording {n})") } else { label.to_string() }
}

/// `b` with its `phase` labels those of recording `n` (unchanged for the first recording or a batch
/// without phases).
pub(crate) fn relabel_phases(b: RecordBatch, n: u32) -> RecordBatch {
    if n <= 1 {
        return b;
    }
    let Some(c) =
        b.schema().fields().iter().position(|f| Field::lookup(f.name()) == Some(Field::Phase))
    else {
        return b;
    };
    let col = b.column(c);
    let labels: StringArray =
        (0..col.len()).map(|i| cols::str_at(col.as_ref(), i).map(|l| phase_label(&l, n))).collect();
    let mut columns: Vec<ArrayRef> = b.columns().to_vec();
    columns[c] = Arc::new(labels);
    let schema = b.schema();
    let mut fields: Vec<arrow_schema::FieldRef> = schema.fields().iter().cloned().collect();
    fields[c] = Arc::new(fields[c].as_ref().clone().with_data_type(arrow_schema::DataType::Utf8));
    let schema =
        Arc::new(arrow_schema::Schema::new_with_metadata(fields, schema.metadata().clone()));
    RecordBatch::try_new(schema, columns).unwrap_or(b)
}

/// The marks a gpumon Parquet file keeps in its footer (`gpumon.marks`: `[{"time", "label"}]`, label
/// null for an end), in time order: µs since the epoch and the label from then on.
pub(crate) type FooterMarks = Arc<[(i64, Option<String>)]>;

/// The footer marks of a gpumon Parquet input that has no `phase` column (a recording whose marks
/// reached only its footer, as gpumon 0.1.0 wrote them without `--phases`); None otherwise.
pub(crate) fn footer_marks(input: &Input) -> Option<FooterMarks> {
    if input.kind != Kind::Parquet {
        return None;
    }
    let (_, meta) = parquet_meta(input).ok()?;
    if meta.schema().fields().iter().any(|f| Field::lookup(f.name()) == Some(Field::Phase)) {
        return None;
    }
    let kv = meta.metadata().file_metadata().key_value_metadata()?;
    let text = kv.iter().find(|k| k.key == "gpumon.marks").and_then(|k| k.value.as_deref())?;
    let list: Vec<serde_json::Value> = serde_json::from_str(text).ok()?;
    let mut marks: Vec<(i64, Option<String>)> = list
        .iter()
        .filter_map(|m| {
            let at = chrono::DateTime::parse_from_rfc3339(m.get("time")?.as_str()?).ok()?;
            Some((at.timestamp_micros(), m.get("label")?.as_str().map(str::to_string)))
        })
        .collect();
    marks.sort_by_key(|m| m.0);
    (!marks.is_empty()).then(|| marks.into())
}

/// `b` with a `phase` column from `marks`: each row gets the label of the last mark at or before its
/// timestamp (a row belongs to the phase current at its timestamp, as the recorder stamps it).
pub(crate) fn add_footer_phases(b: RecordBatch, marks: &FooterMarks) -> RecordBatch {
    let schema = b.schema();
    let Some(c) =
        schema.fields().iter().position(|f| Field::lookup(f.name()) == Some(Field::Timestamp))
    else {
        return b;
    };
    let mut ts = Vec::with_capacity(b.num_rows());
    if !cols::ts_micros(b.column(c).as_ref(), &mut ts) {
        return b;
    }
    let labels: StringArray = ts
        .iter()
        .map(|&t| {
            let n = marks.partition_point(|m| m.0 <= t);
            n.checked_sub(1).and_then(|i| marks[i].1.clone()).filter(|_| t != cols::NO_TS)
        })
        .collect();
    let mut fields: Vec<arrow_schema::FieldRef> = schema.fields().iter().cloned().collect();
    fields.push(Arc::new(arrow_schema::Field::new(
        Field::Phase.name(),
        arrow_schema::DataType::Utf8,
        true,
    )));
    let mut columns: Vec<ArrayRef> = b.columns().to_vec();
    columns.push(Arc::new(labels));
    let schema =
        Arc::new(arrow_schema::Schema::new_with_metadata(fields, schema.metadata().clone()));
    RecordBatch::try_new(schema, columns).unwrap_or(b)
}
