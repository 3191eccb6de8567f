CREATE TABLE "usage_api_daily" (
	"org_id" uuid NOT NULL,
	"day" date NOT NULL,
	"requests" integer DEFAULT 0 NOT NULL,
	"errors" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_api_daily_org_id_day_pk" PRIMARY KEY("org_id","day")
);
