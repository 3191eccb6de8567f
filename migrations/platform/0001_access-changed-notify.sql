-- Custom SQL migration file, put your code below! --
-- Any change to who can see which project (memberships, projects, orgs) notifies every Pier process, which
-- drops its cached access lookups (src/platform/access-cache.ts). A trigger, not application code, so no
-- writer (another area, a manual fix in psql) can forget to invalidate.
CREATE OR REPLACE FUNCTION pier_access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('pier_access_changed', TG_TABLE_NAME);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER memberships_access_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON memberships
  FOR EACH STATEMENT EXECUTE FUNCTION pier_access_changed();
--> statement-breakpoint
CREATE TRIGGER projects_access_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON projects
  FOR EACH STATEMENT EXECUTE FUNCTION pier_access_changed();
--> statement-breakpoint
CREATE TRIGGER orgs_access_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON orgs
  FOR EACH STATEMENT EXECUTE FUNCTION pier_access_changed();
