package instance

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Candidate is a replica that could be promoted, with what was read of it.
type Candidate struct {
	Name   string
	Status Status
	// Err is why the replica could not be read; it is not a candidate.
	Err error
}

// ChoosePrimary picks the replica to promote when the primary is lost: the
// most advanced one, by replication offset, among those that answered and
// are replicas; ties go to the lowest name, so the choice is stable. A
// write acknowledged by WAIT n reached at least n replicas, so the most
// advanced replica holds it.
func ChoosePrimary(cands []Candidate) (string, error) {
	var ok []Candidate
	var why []string
	for _, c := range cands {
		// A replica promoted by hand answers as a primary and is still a
		// candidate: it holds everything it was sent.
		if c.Err != nil {
			why = append(why, fmt.Sprintf("%s: %v", c.Name, c.Err))
			continue
		}
		ok = append(ok, c)
	}
	if len(ok) == 0 {
		if len(why) == 0 {
			return "", errors.New("no replica to promote")
		}
		return "", fmt.Errorf("no replica answered: %s", strings.Join(why, "; "))
	}
	sort.SliceStable(ok, func(i, j int) bool {
		if ok[i].Status.Offset != ok[j].Status.Offset {
			return ok[i].Status.Offset > ok[j].Status.Offset
		}
		return ok[i].Name < ok[j].Name
	})
	return ok[0].Name, nil
}
