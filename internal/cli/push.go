package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/goa2a/a2a/a2a"
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
		name: "push get", args: "URL TASK_ID CONFIG_ID", about: "show a webhook config", want: 3,
		setup: func(*flag.FlagSet) func(*env, *clientFlags, []string) error {
			return func(e *env, cf *clientFlags, pos []string) error {
				c, err := cf.connect(e, pos[0])
				if err != nil {
					return err
				}
				out, err := c.GetTaskPushNotificationConfig(e.ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: pos[1], ID: pos[2]})
				if err != nil {
					return err
				}
				return e.showConfigs(cf, out)
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
