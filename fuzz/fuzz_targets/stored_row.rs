//! Decoding a stored row: arbitrary bytes read as a task's storage form (`tasks_core::Task`)
//! and as a work descriptor (`tasks_runtime::Work`), as the durable stores read their `task`
//! and `work` columns. Never panics, whatever the bytes (invalid JSON, the wrong shape, deep
//! nesting, serde_json's marker names); and whatever decodes is written back by the stores'
//! checked encoder (`tasks_runtime::store::encode_checked`) into a text that reads back as the
//! same value: what a store commits it can always read again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tasks_core::Task;
use tasks_runtime::store::encode_checked;
use tasks_runtime::Work;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(task) = serde_json::from_str::<Task>(text) {
        let written = encode_checked("fuzz", &task).expect("a decoded task encodes and reads back");
        let again: Task = serde_json::from_str(&written).expect("the written task decodes");
        assert_eq!(again, task);
    }
    if let Ok(work) = serde_json::from_str::<Work>(text) {
        let written = encode_checked("fuzz", &work).expect("decoded work encodes and reads back");
        let again: Work = serde_json::from_str(&written).expect("the written work decodes");
        assert_eq!(again, work);
    }
});
