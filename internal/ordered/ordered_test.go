package ordered

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// counter yields 0, 1, ..., n-1, then fails with end.
func counter(n int, end error) func() (int, error) {
	i := 0
	return func() (int, error) {
		if i == n {
			return 0, end
		}
		i++
		return i - 1, nil
	}
}

func TestPipelineOrderAndErrors(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name    string
		workers int
		n       int
		end     error
		work    func(int) (int, error)
		want    int    // results returned before the error
		wantErr string // the terminal error
	}{
		{"in order despite uneven work", 4, 200, io.EOF, func(i int) (int, error) {
			time.Sleep(time.Duration(i%7) * 50 * time.Microsecond) // later items often finish first
			return i * i, nil
		}, 200, "EOF"},
		{"one worker", 1, 50, io.EOF, func(i int) (int, error) { return i * i, nil }, 50, "EOF"},
		{"GOMAXPROCS workers", 0, 50, io.EOF, func(i int) (int, error) { return i * i, nil }, 50, "EOF"},
		{"empty input", 3, 0, io.EOF, func(i int) (int, error) { return i * i, nil }, 0, "EOF"},
		{"source error after the items", 3, 20, errBoom, func(i int) (int, error) { return i * i, nil }, 20, "boom"},
		{"work error stops at its item", 3, 100, io.EOF, func(i int) (int, error) {
			if i == 37 {
				return 0, errBoom
			}
			return i * i, nil
		}, 37, "boom"},
		{"work panic is an error", 2, 100, io.EOF, func(i int) (int, error) {
			if i == 5 {
				panic("bad item")
			}
			return i * i, nil
		}, 5, "panic: bad item"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			p := Start(ctx, tt.workers, counter(tt.n, tt.end), tt.work)
			defer p.Close()
			got := 0
			for {
				out, err := p.Next(ctx)
				if err != nil {
					if !strings.HasPrefix(err.Error(), tt.wantErr) {
						t.Fatalf("error %v, want %q", err, tt.wantErr)
					}
					if _, again := p.Next(ctx); again != err {
						t.Errorf("second Next after the end: %v, want %v", again, err)
					}
					break
				}
				if out != got*got {
					t.Fatalf("result %d is %d, want %d", got, out, got*got)
				}
				got++
			}
			if got != tt.want {
				t.Errorf("%d results before the error, want %d", got, tt.want)
			}
		})
	}
}

// TestPipelineCloseEarly: closing after a few results returns, stops reading, and makes Next
// fail, even though the source has far more items than the pipeline holds in flight.
func TestPipelineCloseEarly(t *testing.T) {
	var read atomic.Int64
	next := func() (int, error) { return int(read.Add(1)), nil } // endless
	p := Start(context.Background(), 2, next, func(i int) (int, error) { return i, nil })
	for range 3 {
		if _, err := p.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	<-p.Ended()
	if _, err := p.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
	time.Sleep(10 * time.Millisecond)
	stopped := read.Load()
	time.Sleep(20 * time.Millisecond)
	if now := read.Load(); now != stopped || now > 3+2*2+2+2 {
		t.Errorf("source read %d items, then %d: not stopped (in flight bound is 2*workers)", stopped, now)
	}
}

func TestPipelineContext(t *testing.T) {
	block := make(chan struct{})
	p := Start(context.Background(), 1, counter(10, io.EOF), func(i int) (int, error) { <-block; return i, nil })
	defer p.Close()
	defer close(block) // before Close, which waits for the blocked worker
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next with an expired context: %v", err)
	}
	block <- struct{}{} // item 0 completes; the next call returns it, not item 1
	if out, err := p.Next(context.Background()); err != nil || out != 0 {
		t.Fatalf("Next after a timed-out call: %d, %v; want item 0", out, err)
	}
}
