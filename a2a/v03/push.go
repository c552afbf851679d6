package v03

import "github.com/goa2a/a2a/a2a"

// PushNotificationConfig is a v0.3 webhook (A2A v0.3 §6.8): the config of
// a message/send configuration, and the inner config of
// [TaskPushNotificationConfig].
type PushNotificationConfig struct {
	ID             string                              `json:"id,omitempty"`
	URL            string                              `json:"url"`
	Token          string                              `json:"token,omitempty"`
	Authentication *PushNotificationAuthenticationInfo `json:"authentication,omitempty"`
}

// PushNotificationAuthenticationInfo is how a v0.3 server authenticates to
// a webhook: a list of schemes and one credential (v1.0 has one scheme).
type PushNotificationAuthenticationInfo struct {
	Schemes     []string `json:"schemes"`
	Credentials string   `json:"credentials,omitempty"`
}

// TaskPushNotificationConfig is a webhook of a task (A2A v0.3 §6.10): the
// params of tasks/pushNotificationConfig/set and the result of set and
// get.
type TaskPushNotificationConfig struct {
	TaskID                 string                 `json:"taskId"`
	PushNotificationConfig PushNotificationConfig `json:"pushNotificationConfig"`
}

// FromV1TaskPushNotificationConfig returns the v0.3 form of c. A tenant,
// which v0.3 does not have, is an UnsupportedOperation error.
func FromV1TaskPushNotificationConfig(c *a2a.TaskPushNotificationConfig) (*TaskPushNotificationConfig, error) {
	if c == nil {
		return nil, nil
	}
	if c.Tenant != "" {
		return nil, noTenant("tenant")
	}
	return &TaskPushNotificationConfig{TaskID: c.TaskID, PushNotificationConfig: fromV1PushConfig(c)}, nil
}

// ToV1TaskPushNotificationConfig returns the v1.0 form of c. Several
// authentication schemes are an UnsupportedOperation error: v1.0 names
// one (the JS SDK and a2a-go keep the first and drop the others); none is
// the empty scheme.
func ToV1TaskPushNotificationConfig(c *TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	if c == nil {
		return nil, nil
	}
	out, err := toV1PushConfig(&c.PushNotificationConfig, "pushNotificationConfig")
	if err != nil {
		return nil, err
	}
	out.TaskID = c.TaskID
	return out, nil
}

func fromV1PushConfig(c *a2a.TaskPushNotificationConfig) PushNotificationConfig {
	out := PushNotificationConfig{ID: c.ID, URL: c.URL, Token: c.Token}
	if a := c.Authentication; a != nil {
		out.Authentication = &PushNotificationAuthenticationInfo{Schemes: []string{}, Credentials: a.Credentials}
		if a.Scheme != "" {
			out.Authentication.Schemes = []string{a.Scheme}
		}
	}
	return out
}

func toV1PushConfig(c *PushNotificationConfig, path string) (*a2a.TaskPushNotificationConfig, error) {
	out := &a2a.TaskPushNotificationConfig{ID: c.ID, URL: c.URL, Token: c.Token}
	if a := c.Authentication; a != nil {
		if len(a.Schemes) > 1 {
			return nil, notInV1(join(path, "authentication.schemes"), "v1.0 names one authentication scheme")
		}
		out.Authentication = &a2a.AuthenticationInfo{Credentials: a.Credentials}
		if len(a.Schemes) == 1 {
			out.Authentication.Scheme = a.Schemes[0]
		}
	}
	return out, nil
}

// noTenant is the error for a tenant: v0.3 has none, and a v0.3 peer
// would act on another tenant's tasks (the default one) if it were left
// out.
func noTenant(field string) *a2a.Error {
	return notInV03(field, "v0.3 has no tenants")
}

// FromV1ListTaskPushNotificationConfigsResponse returns the v0.3 result of
// tasks/pushNotificationConfig/list: every config, in one array. A next
// page token is an UnsupportedOperation error, since v0.3 has no paging:
// ask for all configs at once.
func FromV1ListTaskPushNotificationConfigsResponse(r *a2a.ListTaskPushNotificationConfigsResponse) ([]TaskPushNotificationConfig, error) {
	if r == nil {
		return []TaskPushNotificationConfig{}, nil
	}
	if r.NextPageToken != "" {
		return nil, notInV03("nextPageToken", "v0.3 has no paging of push notification configs")
	}
	out := make([]TaskPushNotificationConfig, len(r.Configs))
	for i := range r.Configs {
		c := &r.Configs[i]
		if c.Tenant != "" {
			return nil, noTenant(index("configs", i) + ".tenant")
		}
		out[i] = TaskPushNotificationConfig{TaskID: c.TaskID, PushNotificationConfig: fromV1PushConfig(c)}
	}
	return out, nil
}

// ToV1ListTaskPushNotificationConfigsResponse returns the v1.0 form of a
// tasks/pushNotificationConfig/list result.
func ToV1ListTaskPushNotificationConfigsResponse(cs []TaskPushNotificationConfig) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	out := &a2a.ListTaskPushNotificationConfigsResponse{}
	if len(cs) > 0 {
		out.Configs = make([]a2a.TaskPushNotificationConfig, len(cs))
	}
	for i := range cs {
		c, err := toV1PushConfig(&cs[i].PushNotificationConfig, index("", i)+".pushNotificationConfig")
		if err != nil {
			return nil, err
		}
		c.TaskID = cs[i].TaskID
		out.Configs[i] = *c
	}
	return out, nil
}
