package cli

import (
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/goa2a/a2a/a2a"
)

// listFlags are the flags of a2a list.
type listFlags struct {
	status    string
	contextID string
	all       bool
	pageSize  int
	pageToken string
}

var listCommand = &command{
	name: "list", args: "URL", about: "list tasks, newest first", want: 1,
	setup: func(fs *flag.FlagSet) func(*env, *clientFlags, []string) error {
		o := &listFlags{}
		fs.StringVar(&o.status, "status", "", "only tasks in this state (completed, working, TASK_STATE_FAILED, ...)")
		fs.StringVar(&o.contextID, "context", "", "only tasks of this context")
		fs.BoolVar(&o.all, "all", false, "walk every page")
		fs.IntVar(&o.pageSize, "page-size", 0, "tasks per page, 1 to 100 (default: the server's, 50)")
		fs.StringVar(&o.pageToken, "page-token", "", "start at this page (from a previous listing)")
		return o.run
	},
}

// parseState accepts "completed", "input-required" or "TASK_STATE_COMPLETED".
func parseState(s string) (a2a.TaskState, error) {
	name := strings.ToUpper(strings.NewReplacer("-", "_", " ", "_").Replace(s))
	if !strings.HasPrefix(name, "TASK_STATE_") {
		name = "TASK_STATE_" + name
	}
	st, err := a2a.ParseTaskState(name)
	if err != nil || !st.Valid() {
		return 0, usageError(fmt.Sprintf("--status %q: not a task state (submitted, working, input-required, auth-required, completed, failed, canceled, rejected)", s))
	}
	return st, nil
}

func (o *listFlags) run(e *env, cf *clientFlags, pos []string) error {
	req := &a2a.ListTasksRequest{ContextID: o.contextID, PageToken: o.pageToken, HistoryLength: a2a.Ptr(int32(0))}
	if o.status != "" {
		st, err := parseState(o.status)
		if err != nil {
			return err
		}
		req.Status = st
	}
	if o.pageSize != 0 {
		req.PageSize = a2a.Ptr(int32(o.pageSize))
	}
	c, err := cf.connect(e, pos[0])
	if err != nil {
		return err
	}
	var tasks []a2a.Task
	var next string
	total := 0
	if o.all {
		for t, err := range c.AllTasks(e.ctx, req) {
			if err != nil {
				return err
			}
			if cf.json {
				if err := e.printJSON(t); err != nil {
					return err
				}
				continue
			}
			tasks = append(tasks, *t)
		}
		total = len(tasks)
	} else {
		res, err := c.ListTasks(e.ctx, req)
		if err != nil {
			return err
		}
		if cf.json {
			return e.printJSON(res)
		}
		tasks, next, total = res.Tasks, res.NextPageToken, int(res.TotalSize)
	}
	if cf.json {
		return nil
	}
	s := style{e.term}
	if len(tasks) == 0 {
		fmt.Fprintln(e.stdout, "no tasks")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATE\tUPDATED\tCONTEXT\tSTATUS MESSAGE")
	for _, t := range tasks {
		msg := ""
		if m := t.Status.Message; m != nil {
			msg = strings.ReplaceAll(strings.TrimSpace(partsText(m.Parts)), "\n", " ")
			if len(msg) > 60 {
				msg = msg[:57] + "..."
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, stateName(t.Status.State), t.Status.Timestamp, short(t.ContextID), msg)
	}
	tw.Flush()
	fmt.Fprintf(e.stdout, "%s\n", s.dim(fmt.Sprintf("%d of %d tasks", len(tasks), total)))
	if next != "" {
		fmt.Fprintf(e.stdout, "%s\n", s.dim("more: add --all, or --page-token "+next))
	}
	return nil
}
