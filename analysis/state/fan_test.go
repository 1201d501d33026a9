package state

import (
	"errors"
	"testing"

	"github.com/parscope/parscope/trace"
)

// fanReader counts what a Fan hands it: rows (Row) and records
// (Records), which the fan delivers from two goroutines; it fails its
// Records at the batch failAt (from 1), when set.
type fanReader struct {
	rows, recs, batches, failAt int
	lastT                       int64
	ordered                     bool
}

var errRecords = errors.New("records refused")

// rowsOnly is a reader of rows only.
type rowsOnly struct{ r *fanReader }

func (o rowsOnly) Row(row *Row) error { return o.r.Row(row) }

func (r *fanReader) Row(row *Row) error {
	r.rows++
	if row.T < r.lastT {
		r.ordered = false
	}
	r.lastT = row.T
	return nil
}

func (r *fanReader) Records(batch []trace.Record) error {
	r.batches++
	if r.batches == r.failAt {
		return errRecords
	}
	r.recs += len(batch)
	return nil
}

// TestFan feeds a Fan batches of state records of 3 processes, each
// record at a time of its own, with a reader of rows and records and
// one of rows only: every record reaches Records, every row (one per
// time) reaches both Row readers in order, and an error of Records is
// the one Add returns.
func TestFan(t *testing.T) {
	h := &trace.Header{Runs: []trace.RunInfo{{Procs: 3}}}
	var batches [][]trace.Record
	n := 0
	for b := range 50 {
		var batch []trace.Record
		for i := range 100 {
			k := int64(b*100 + i)
			batch = append(batch, trace.State(0, int32(k%3), 10*k, int32(k%5)))
			n++
		}
		batches = append(batches, batch)
	}
	both, rows := &fanReader{ordered: true}, &fanReader{ordered: true}
	f, err := NewFan(h, Options{}, []RowReader{both, rowsOnly{rows}})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := f.Add(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.End(); err != nil {
		t.Fatal(err)
	}
	if both.recs != n || both.rows != n || rows.rows != n || rows.batches != 0 || !both.ordered || !rows.ordered {
		t.Fatalf("records %d, rows %d and %d (ordered %v %v), want %d each", both.recs, both.rows, rows.rows, both.ordered, rows.ordered, n)
	}
	failing := &fanReader{failAt: 3, ordered: true}
	f, err = NewFan(h, Options{}, []RowReader{failing})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range batches {
		err := f.Add(b)
		if i == 2 && !errors.Is(err, errRecords) || i != 2 && err != nil {
			t.Fatalf("batch %d: err %v", i+1, err)
		}
		if err != nil {
			break
		}
	}
}
