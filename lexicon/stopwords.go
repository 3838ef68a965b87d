package lexicon

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// StopSet is a set of stop words: words an attack must not replace. Lookups
// are exact; every list here is lower case, so callers that do not lowercase
// their tokens should do so before asking.
type StopSet map[string]bool

// NewStopSet returns a set holding words.
func NewStopSet(words ...string) StopSet {
	s := make(StopSet, len(words))
	for _, w := range words {
		s[w] = true
	}
	return s
}

// Has reports whether w is a stop word. A nil set holds nothing.
func (s StopSet) Has(w string) bool { return s[w] }

// TextFooler returns the 266-word stop list of TextFooler (Jin et al. 2020),
// which the TextAttack textfooler_jin_2019 recipe uses unchanged. The list is
// compiled in, so it needs no data files; it equals
// shared/data/stopwords/textfooler_stopwords.txt (a test checks this).
func TextFooler() StopSet { return NewStopSet(TextFoolerWords()...) }

// TextFoolerWords returns the TextFooler stop list in its original order.
func TextFoolerWords() []string { return strings.Fields(textFoolerStopwords) }

// FTML21 returns the 21 stop words for which FTML (spec ftml.md §3) leaves
// the synonym set empty.
func FTML21() StopSet { return NewStopSet(FTML21Words()...) }

// FTML21Words returns FTML's 21 stop words in the order the spec lists them.
func FTML21Words() []string { return strings.Fields(ftml21Stopwords) }

const ftml21Stopwords = "the a an to of and with as at by is was are were be he she they their this that"

// LoadStopwords reads a stop list with one word per line. Surrounding blank
// space is trimmed and blank lines are skipped; a line holding more than one
// word is an error, since it usually means the wrong file was given.
func LoadStopwords(path string) (StopSet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("lexicon: stop words: %w", err)
	}
	defer f.Close()
	s := StopSet{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		w := strings.TrimSpace(sc.Text())
		if w == "" {
			continue
		}
		if strings.ContainsAny(w, " \t") {
			return nil, fmt.Errorf("%s:%d: want one word per line, got %q", path, line, w)
		}
		s[w] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("lexicon: stop words %s: %w", path, err)
	}
	return s, nil
}

// textFoolerStopwords is TextFooler's get_stopwords() list, one word per
// line, in its original order: jind11/TextFooler @ 6a56cb1, criteria.py
// (MIT License, Copyright (c) 2021 Di Jin).
const textFoolerStopwords = `
a
about
above
across
after
afterwards
again
against
ain
all
almost
alone
along
already
also
although
am
among
amongst
an
and
another
any
anyhow
anyone
anything
anyway
anywhere
are
aren
aren't
around
as
at
back
been
before
beforehand
behind
being
below
beside
besides
between
beyond
both
but
by
can
cannot
could
couldn
couldn't
d
didn
didn't
doesn
doesn't
don
don't
down
due
during
either
else
elsewhere
empty
enough
even
ever
everyone
everything
everywhere
except
first
for
former
formerly
from
hadn
hadn't
hasn
hasn't
haven
haven't
he
hence
her
here
hereafter
hereby
herein
hereupon
hers
herself
him
himself
his
how
however
hundred
i
if
in
indeed
into
is
isn
isn't
it
it's
its
itself
just
latter
latterly
least
ll
may
me
meanwhile
mightn
mightn't
mine
more
moreover
most
mostly
must
mustn
mustn't
my
myself
namely
needn
needn't
neither
never
nevertheless
next
no
nobody
none
noone
nor
not
nothing
now
nowhere
o
of
off
on
once
one
only
onto
or
other
others
otherwise
our
ours
ourselves
out
over
per
please
s
same
shan
shan't
she
she's
should've
shouldn
shouldn't
somehow
something
sometime
somewhere
such
t
than
that
that'll
the
their
theirs
them
themselves
then
thence
there
thereafter
thereby
therefore
therein
thereupon
these
they
this
those
through
throughout
thru
thus
to
too
toward
towards
under
unless
until
up
upon
used
ve
was
wasn
wasn't
we
were
weren
weren't
what
whatever
when
whence
whenever
where
whereafter
whereas
whereby
wherein
whereupon
wherever
whether
which
while
whither
who
whoever
whole
whom
whose
why
with
within
without
won
won't
would
wouldn
wouldn't
y
yet
you
you'd
you'll
you're
you've
your
yours
yourself
yourselves
`
