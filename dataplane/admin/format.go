package admin

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WritePools prints pools as a table for a person (`ramjetd upstreams`).
func WritePools(w io.Writer, pools []Pool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POOL\tMEMBERS\tIN FLIGHT\tFAILURES\tRETRIES\tSOURCE\tBALANCE\tSCHEME")
	for _, p := range pools {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n",
			p.Name, p.MemberCount, p.InFlight, p.Failures, p.Retries, p.MembersFrom, p.Balance, p.Scheme)
	}
	return tw.Flush()
}

// WritePool prints one pool and its members (`ramjetd upstreams show POOL`).
func WritePool(w io.Writer, p Pool) error {
	fmt.Fprintf(w, "pool %s: %d members, members_from %s, balance %s, scheme %s, %d retries\n",
		p.Name, p.MemberCount, p.MembersFrom, p.Balance, p.Scheme, p.Retries)
	if len(p.Members) == 0 {
		_, err := fmt.Fprintln(w, "no members: requests to this pool are answered 503")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ADDRESS\tWEIGHT\tIN FLIGHT\tREQUESTS\tFAILURES")
	for _, m := range p.Members {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", m.Address, m.Weight, m.InFlight, m.Requests, m.Failures)
	}
	return tw.Flush()
}
