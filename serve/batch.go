package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Errors a batcher answers instead of a result.
var (
	// errQueueFull: the texts waiting would pass the queue bound (429).
	errQueueFull = errors.New("the queue is full")
	// errStopped: the batcher was stopped (the server is shutting down).
	errStopped = errors.New("the server is shutting down")
)

// job is one request's texts waiting for a forward pass.
type job[R any] struct {
	ctx   context.Context
	texts []string
	out   []R
	err   error
	done  chan struct{}
	taken atomic.Bool // by a worker, or abandoned by its request
}

// batcher runs one model's forward passes (one kind: predictions or
// embeddings) over the texts of concurrent requests together: a worker
// takes the first waiting request, then more until it holds max texts or
// wait has passed since it took the first, and runs one forward pass over
// them all. With workers > 1, one worker collects while the others
// compute, so a worker that frees up takes whatever queued meanwhile (up
// to max) without waiting. Texts waiting are bounded by bound: a request
// that would pass it is refused at once (errQueueFull) rather than queued.
type batcher[R any] struct {
	run   func(texts []string) ([]R, error)
	max   int
	wait  time.Duration
	bound int64

	queue   chan *job[R]
	queued  atomic.Int64 // texts waiting (not yet taken by a worker)
	collect sync.Mutex   // one worker collects at a time
	stop    chan struct{}
	stopped sync.Once
	mu      sync.RWMutex // held to send; closed under it
	closed  bool
	wg      sync.WaitGroup

	// observe, when set, is told of each forward pass: its texts and time.
	observe func(texts int, d time.Duration)
	// gauge, when set, is told the texts waiting after each change.
	gauge func(n int64)
}

// newBatcher starts workers workers running run.
func newBatcher[R any](run func([]string) ([]R, error), max int, wait time.Duration, bound, workers int) *batcher[R] {
	b := &batcher[R]{run: run, max: max, wait: wait, bound: int64(bound),
		// Every job holds at least one text: bound jobs never block a send.
		queue: make(chan *job[R], bound), stop: make(chan struct{})}
	for range workers {
		b.wg.Add(1)
		go b.worker()
	}
	return b
}

// submit queues texts and waits for their results, in order. It returns
// errQueueFull at once when the queue has no room for them, ctx's error
// when ctx ends before a worker takes them (or before their pass ends),
// and errStopped when the batcher stops first.
func (b *batcher[R]) submit(ctx context.Context, texts []string) ([]R, error) {
	if len(texts) == 0 {
		return []R{}, nil
	}
	n := int64(len(texts))
	if b.queued.Add(n) > b.bound {
		b.setGauge(b.queued.Add(-n))
		return nil, errQueueFull
	}
	j := &job[R]{ctx: ctx, texts: texts, done: make(chan struct{})}
	if err := b.enqueue(ctx, j); err != nil {
		b.setGauge(b.queued.Add(-n))
		return nil, err
	}
	b.setGauge(b.queued.Load())
	select {
	case <-j.done:
		return j.out, j.err
	case <-ctx.Done():
		if j.taken.CompareAndSwap(false, true) {
			// Still waiting: it leaves the queue's count now, and the
			// worker that meets it skips it.
			b.setGauge(b.queued.Add(-n))
		}
		return nil, context.Cause(ctx)
	}
}

// enqueue sends j to the workers unless the batcher is closed.
func (b *batcher[R]) enqueue(ctx context.Context, j *job[R]) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return errStopped
	}
	// The channel has room for bound jobs, but jobs whose requests gave up
	// stay in it (uncounted) until a worker meets them.
	select {
	case b.queue <- j:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (b *batcher[R]) setGauge(n int64) {
	if b.gauge != nil {
		b.gauge(n)
	}
}

// close stops the workers once the queue is empty; requests still queued
// are answered first. Later submits get errStopped.
func (b *batcher[R]) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.stopped.Do(func() { close(b.stop) })
	b.wg.Wait()
	for {
		select {
		case j := <-b.queue: // sent as the last worker left
			if j.taken.CompareAndSwap(false, true) {
				j.err = errStopped
				close(j.done)
			}
		default:
			return
		}
	}
}

func (b *batcher[R]) worker() {
	defer b.wg.Done()
	for {
		b.collect.Lock()
		batch, ok := b.take()
		b.collect.Unlock()
		if !ok {
			return
		}
		b.forward(batch)
	}
}

// take collects a batch: the first waiting job, then more until max texts
// or wait has passed (with wait 0, only those queued already). A job that
// would pass max is left for the next batch. It returns false once
// stopped with nothing queued.
func (b *batcher[R]) take() ([]*job[R], bool) {
	var batch []*job[R]
	n := 0
	add := func(j *job[R]) bool {
		if !j.taken.CompareAndSwap(false, true) {
			return false // its request gave up
		}
		batch = append(batch, j)
		n += len(j.texts)
		b.setGauge(b.queued.Add(-int64(len(j.texts))))
		return true
	}
	for len(batch) == 0 {
		select {
		case j := <-b.queue:
			add(j)
		case <-b.stop:
			select {
			case j := <-b.queue:
				add(j)
			default:
				return nil, false
			}
		}
	}
	var timer <-chan time.Time
	if b.wait > 0 {
		t := time.NewTimer(b.wait)
		defer t.Stop()
		timer = t.C
	}
	for n < b.max {
		// What is queued already joins without waiting.
		select {
		case j := <-b.queue:
			if n+len(j.texts) > b.max && len(batch) > 0 {
				b.requeue(j)
				return batch, true
			}
			add(j)
			continue
		default:
		}
		if timer == nil {
			break
		}
		select {
		case j := <-b.queue:
			if n+len(j.texts) > b.max && len(batch) > 0 {
				b.requeue(j)
				return batch, true
			}
			add(j)
		case <-timer:
			return batch, true
		case <-b.stop:
			return batch, true
		}
	}
	return batch, true
}

// requeue puts back a job that did not fit, at the back of the queue
// (which usually has room: the job is still counted against the bound).
func (b *batcher[R]) requeue(j *job[R]) {
	select {
	case b.queue <- j:
	default:
		// The queue filled meanwhile: run it in a batch of its own.
		go func() { b.queue <- j }()
	}
}

// forward runs one pass over the batch's texts and hands each job its
// results. A panic in the model fails the batch, not the server.
func (b *batcher[R]) forward(batch []*job[R]) {
	var texts []string
	for _, j := range batch {
		texts = append(texts, j.texts...)
	}
	start := time.Now()
	out, err := func() (out []R, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("the model failed on this batch: %v", p)
			}
		}()
		return b.run(texts)
	}()
	if err == nil && len(out) != len(texts) {
		err = fmt.Errorf("the model gave %d results for %d texts", len(out), len(texts))
	}
	if b.observe != nil {
		b.observe(len(texts), time.Since(start))
	}
	off := 0
	for _, j := range batch {
		if err != nil {
			j.err = err
		} else {
			j.out = out[off : off+len(j.texts) : off+len(j.texts)]
		}
		off += len(j.texts)
		close(j.done)
	}
}
