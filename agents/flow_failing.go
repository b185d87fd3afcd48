package agents

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/traces"
)

// Agent descriptions of the failing flow.
const (
	releaseDesc = "Runs releases: checks CI, then hands the database work to db_agent."
	dbDesc      = "Backs the database up and migrates it."
)

// errMigration is what run_migrations fails with; eino fails the run with it.
var errMigration = errors.New(`migration 0042_add_plan failed: column "plan" of relation "accounts" already exists`)

func init() {
	register(Flow{
		Name:  "failing",
		Title: "A run that fails: a tool error nobody can recover from",
		Group: GroupFailure,
		Plain: "A database migration fails and nothing recovers: how a failed run looks, and where it says why.",
		Description: "release_manager checks CI and transfers to db_agent, which backs the database up and runs the " +
			"migrations. run_migrations returns an error, and a ChatModelAgent does not hand a tool's error back " +
			"to its model: eino ends the run with it. Look at how the page draws a failed run: the failed tool " +
			"call, db_agent's failed end, and the run's error.",
		DefaultInput: "Release v2.4.0 to production",
		InputNote:    fixedAnswers,
		Agents: []traces.Agent{
			{Name: "release_manager", Description: releaseDesc, Kind: traces.AgentChatModel, Tools: []string{"check_ci", "transfer_to_agent"}},
			{Name: "db_agent", Description: dbDesc, Kind: traces.AgentChatModel, Parent: "release_manager",
				Relation: traces.RelationSubAgent, Tools: []string{"backup_database", "run_migrations", "transfer_to_agent"}},
		},
		Scripts: map[string]Script{
			"release_manager": NewScript(
				Do(Call("check_ci", releaseArg{Since: "v2.4.0"})),
				SayAndDo("CI is green. db_agent migrates the database first.", Transfer("db_agent")),
			),
			"db_agent": NewScript(
				Do(Call("backup_database", dbArg{Database: "accounts"})),
				SayAndDo("Backup done; migrating.", Call("run_migrations", dbArg{Database: "accounts"})),
				Say("This is never said: the migration failed."),
			),
		},
		Build: buildFailing,
	})
}

// buildFailing builds the failing flow anew.
func buildFailing(ctx context.Context, models ModelFor) (adk.Agent, error) {
	var rt, dt toolBox
	addTool(&rt, "check_ci", "Check the CI status of a release.", func(_ context.Context, in releaseArg) (string, error) {
		return fmt.Sprintf("CI for %s: 412 tests passed, 0 failed.", in.Since), nil
	})
	addTool(&dt, "backup_database", "Back a database up.", func(_ context.Context, in dbArg) (string, error) {
		return fmt.Sprintf("Backup of %s written to s3://backups/%s-0314.dump (2.1 GB).", in.Database, in.Database), nil
	})
	addTool(&dt, "run_migrations", "Run the pending migrations of a database.", func(context.Context, dbArg) (string, error) {
		return "", errMigration
	})
	if err := errors.Join(rt.err, dt.err); err != nil {
		return nil, err
	}
	built, err := newChatAgents(ctx, models, adk.ChatModelAgentConfig{
		Name: "release_manager", Description: releaseDesc, ToolsConfig: rt.toolsConfig(),
		Instruction: "You run releases: check CI with check_ci, then transfer the database work to db_agent.",
	}, adk.ChatModelAgentConfig{
		Name: "db_agent", Description: dbDesc, ToolsConfig: dt.toolsConfig(),
		Instruction: "You back the database up with backup_database, then migrate it with run_migrations.",
	})
	if err != nil {
		return nil, err
	}
	release, db := built[0], built[1]
	root, err := adk.SetSubAgents(ctx, release, []adk.Agent{db})
	if err != nil {
		return nil, fmt.Errorf("set sub-agents of release_manager: %w", err)
	}
	return root, nil
}

// dbArg is the argument of db_agent's tools.
type dbArg struct {
	Database string `json:"database" jsonschema:"description=the database's name"`
}
