package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/server"
)

// pushCommands are the subcommands of a2a push.
var pushCommands = map[string]*command{
	"create": {
		name: "push create", args: "URL TASK_ID WEBHOOK_URL", about: "register a webhook for a task's updates", want: 3,
		setup: func(fs *flag.FlagSet) func(*env, *clientFlags, []string) error {
			id := fs.String("id", "", "the config's id (default: the server assigns one)")
			token := fs.String("push-token", "", "token the server sends with each notification")
			scheme := fs.String("auth-scheme", "", `scheme of the credentials the server presents, e.g. "Bearer"`)
			creds := fs.String("auth-credentials", "", "credentials the server presents to the webhook")
			return func(e *env, cf *clientFlags, pos []string) error {
				cfg := &a2a.TaskPushNotificationConfig{TaskID: pos[1], URL: pos[2], ID: *id, Token: *token}
				if *scheme != "" || *creds != "" {
					if *scheme == "" {
						return usageError("--auth-credentials needs --auth-scheme")
					}
					cfg.Authentication = &a2a.AuthenticationInfo{Scheme: *scheme, Credentials: *creds}
				}
				c, err := cf.connect(e, pos[0])
				if err != nil {
					return err
				}
				out, err := c.CreateTaskPushNotificationConfig(e.ctx, cfg)
				if err != nil {
					return err
				}
				return e.showConfigs(cf, out)
			}
		},
	},
	"get": {
		name: "push get", args: "URL TASK_ID CONFIG_ID", about: "show a webhook config and, from a goa2a server, how its delivery stands", want: 3,
		setup: func(*flag.FlagSet) func(*env, *clientFlags, []string) error {
			return func(e *env, cf *clientFlags, pos []string) error {
				c, err := cf.connect(e, pos[0], client.WithExtensions(server.PushDeliveryExtension))
				if err != nil {
					return err
				}
				var hdr http.Header
				ctx := client.WithResponseHeader(e.ctx, &hdr)
				out, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: pos[1], ID: pos[2]})
				if err != nil {
					if e.configMissing(c, err, pos[1]) {
						fmt.Fprintf(e.stderr, "a2a push get: webhook config %s was not found on task %s\n", pos[2], pos[1])
						return exitCode(ExitProtocol)
					}
					return err
				}
				if err := e.showConfigs(cf, out); err != nil {
					return err
				}
				if d := hdr.Get(server.PushDeliveryHeader); d != "" && !cf.json {
					fmt.Fprintf(e.stdout, "  delivery  %s\n", describeDelivery(d))
				}
				return nil
			}
		},
	},
	"list": {
		name: "push list", args: "URL TASK_ID", about: "list a task's webhook configs", want: 2,
		setup: func(*flag.FlagSet) func(*env, *clientFlags, []string) error {
			return func(e *env, cf *clientFlags, pos []string) error {
				c, err := cf.connect(e, pos[0])
				if err != nil {
					return err
				}
				res, err := c.ListTaskPushNotificationConfigs(e.ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: pos[1]})
				if err != nil {
					return err
				}
				if cf.json {
					return e.printJSON(res)
				}
				if len(res.Configs) == 0 {
					fmt.Fprintln(e.stdout, "no webhook configs")
					return nil
				}
				for i := range res.Configs {
					printConfig(e.stdout, &res.Configs[i])
				}
				return nil
			}
		},
	},
	"delete": {
		name: "push delete", args: "URL TASK_ID CONFIG_ID", about: "remove a webhook config", want: 3,
		setup: func(*flag.FlagSet) func(*env, *clientFlags, []string) error {
			return func(e *env, cf *clientFlags, pos []string) error {
				c, err := cf.connect(e, pos[0])
				if err != nil {
					return err
				}
				if !cf.json {
					// Deleting succeeds whether or not the config was there
					// (A2A §3.1.10): ask first, so as to say which. Exit 0
					// either way, as the protocol answers: the config is
					// gone, which is what a script deleting it wants.
					_, err := c.GetTaskPushNotificationConfig(e.ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: pos[1], ID: pos[2]})
					if err != nil && e.configMissing(c, err, pos[1]) {
						fmt.Fprintf(e.stdout, "webhook config %s was not found on task %s (nothing deleted)\n", pos[2], pos[1])
						return nil
					}
				}
				if err := c.DeleteTaskPushNotificationConfig(e.ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: pos[1], ID: pos[2]}); err != nil {
					return err
				}
				if cf.json {
					return e.printJSON(struct{}{})
				}
				fmt.Fprintf(e.stdout, "deleted webhook config %s of task %s\n", pos[2], pos[1])
				return nil
			}
		},
	},
}

// configMissing reports whether err, the answer to a call about one
// config of task taskID, means that the config does not exist on a task
// that does. The protocol answers TaskNotFoundError for both (A2A §3.1.8),
// so the task is looked up to tell them apart.
func (e *env) configMissing(c *client.Client, err error, taskID string) bool {
	var ae *a2a.Error
	if !errors.As(err, &ae) || ae.Code != a2a.CodeTaskNotFound {
		return false
	}
	_, err = c.GetTask(e.ctx, &a2a.GetTaskRequest{ID: taskID, HistoryLength: a2a.Ptr(int32(0))})
	return err == nil
}

func (e *env) showConfigs(cf *clientFlags, c *a2a.TaskPushNotificationConfig) error {
	if cf.json {
		return e.printJSON(c)
	}
	printConfig(e.stdout, c)
	return nil
}

// printConfig writes a config without its secrets.
func printConfig(w io.Writer, c *a2a.TaskPushNotificationConfig) {
	extra := ""
	if c.Token != "" {
		extra += "  token set"
	}
	if a := c.Authentication; a != nil {
		extra += "  auth " + a.Scheme
	}
	fmt.Fprintf(w, "webhook %s  task %s  -> %s%s\n", c.ID, c.TaskID, c.URL, extra)
}

// describeDelivery turns the server's delivery header into a sentence
// that says only what the state shows: "nothing to deliver: the task had
// ended when the config was created", "done: the task ended, and every
// update since the config was created went out (through event 9, its
// last)", "up to date: ... waiting for the next", "catching up: updates
// went out through event 3 of the task's 7", "retrying event
// 4 (2 failed attempts, next at ...): webhook answered 503 ...", "FAILING
// at event 4 after 10 attempts: ...; register the config again with the
// same id to resume", or "REFUSED at event 2: ..." when the server's SSRF
// guard will not call the webhook. A server older than the "last" item
// gets the plain "done through event N of the task's log".
func describeDelivery(v string) string {
	var delivered, last int64
	attempts := 0
	var next, why string
	failing, ended, nothing, haveLast := false, false, false, false
	if i := strings.Index(v, "error="); i >= 0 {
		// Last, and its quoted text may hold semicolons.
		if u, err := strconv.Unquote(v[i+len("error="):]); err == nil {
			why = u
		} else {
			why = v[i+len("error="):]
		}
		v = v[:i]
	}
	for item := range strings.SplitSeq(v, ";") {
		k, val, _ := strings.Cut(strings.TrimSpace(item), "=")
		switch k {
		case "delivered":
			delivered, _ = strconv.ParseInt(val, 10, 64)
		case "attempts":
			attempts, _ = strconv.Atoi(val)
		case "next":
			next = val
		case "failing":
			failing = true
		case "last":
			last, _ = strconv.ParseInt(val, 10, 64)
			haveLast = true
		case "ended":
			ended = true
		case "nothing-to-send":
			nothing = true
		}
	}
	done := strconv.FormatInt(delivered, 10)
	at := strconv.FormatInt(delivered+1, 10)
	switch {
	case failing && strings.HasPrefix(why, push.RefusedPrefix):
		// Registering again would be refused again: the server's
		// allow-list decides.
		return "REFUSED at event " + at + ": the server will not call this webhook: " + strings.TrimPrefix(why, push.RefusedPrefix)
	case failing:
		s := "FAILING at event " + at + " after " + plural(attempts, "attempt")
		if why != "" {
			s += ": " + why
		}
		return s + "; register the config again with the same id to resume"
	case attempts > 0:
		s := "retrying event " + at + " (" + plural(attempts, "failed attempt")
		if next != "" {
			s += ", next at " + next
		}
		s += ")"
		if why != "" {
			s += ": " + why
		}
		return s
	case nothing:
		return "nothing to deliver: the task had ended when the config was created"
	case !haveLast:
		return "done through event " + done + " of the task's log"
	case delivered < last:
		return "catching up: updates went out through event " + done + " of the task's " + strconv.FormatInt(last, 10)
	case ended:
		return "done: the task ended, and every update since the config was created went out (through event " + done + ", its last)"
	default:
		return "up to date: every update since the config was created went out (through event " + done + "); waiting for the next"
	}
}
