package server

import "github.com/goa2a/a2a/a2a"

// WithheldText is the only part of a message that answered a task in
// TASK_STATE_AUTH_REQUIRED, as the task's history keeps it.
const WithheldText = "[credentials withheld]"

// WithheldMetadataKey is the metadata key that marks a history message
// whose content was withheld. Its value is the number of parts the client
// sent.
const WithheldMetadataKey = "goa2a.withheld"

// withholdCredentials returns what the task's history keeps of msg, a
// client message that answers a task in TASK_STATE_AUTH_REQUIRED.
//
// Such a message carries credentials (A2A §7.6): a token, a password, an
// approval code for a downstream system. The agent receives the message in
// full, as [Request.Message], and can use it. The task's log, and so
// everything built from it (GetTask, ListTasks, SendStreamingMessage,
// SubscribeToTask, push payloads, the store itself), keeps this copy
// instead: the same messageId, role, taskId, contextId, extensions and
// referenceTaskIds, so clients see that and when they answered, but one
// text part [WithheldText] in place of the parts, and metadata
// {[WithheldMetadataKey]: number of parts} in place of the client's
// metadata, which may carry credentials too.
//
// This is the one place the rule lives; continueTask applies it. It
// cannot be turned off: an agent that needs the answer later keeps it
// itself, as an agent keeps any credential it is given.
func withholdCredentials(msg *a2a.Message) *a2a.Message {
	return &a2a.Message{
		MessageID:        msg.MessageID,
		ContextID:        msg.ContextID,
		TaskID:           msg.TaskID,
		Role:             msg.Role,
		Parts:            []a2a.Part{a2a.TextPart(WithheldText)},
		Metadata:         map[string]any{WithheldMetadataKey: len(msg.Parts)},
		Extensions:       msg.Extensions,
		ReferenceTaskIDs: msg.ReferenceTaskIDs,
	}
}
