import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { JSON_DOCUMENT, UUID, UUID_LENGTH } from '../../database/column-types.js';
import { User } from '../../users/user.entity.js';

/**
 * What a directory says about a person beyond our own attributes (SCIM, RFC 7643 §4.1, §4.3): its
 * externalId, the enterprise extension, and the other User attributes kept as the directory sent
 * them. userName, name, the primary email and active live on the person (users).
 */
@Entity({ name: 'scim_users' })
export class ScimUser {
  @PrimaryColumn({ name: 'user_id', type: UUID, length: UUID_LENGTH })
  userId: string;

  /** Deleting the person deletes what the directory said about them. */
  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  /** RFC 7643 §3.1: the directory's own identifier (Entra ID's objectId, say); `filter=externalId eq` looks it up by this index. */
  @Index()
  @Column({ name: 'external_id', type: 'varchar', length: 255, nullable: true })
  externalId: string | null;

  /** RFC 7643 §4.3 employeeNumber. */
  @Column({ name: 'employee_number', type: 'varchar', length: 100, nullable: true })
  employeeNumber: string | null;

  /** RFC 7643 §4.3 department. */
  @Column({ type: 'varchar', length: 200, nullable: true })
  department: string | null;

  /** RFC 7643 §4.3 manager.value: another person here; cleared when that person is deleted. */
  @Index()
  @Column({ name: 'manager_id', type: UUID, length: UUID_LENGTH, nullable: true })
  managerId: string | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'manager_id' })
  manager?: Relation<User>;

  /**
   * The other attributes of the representation (emails, phoneNumbers, addresses, title,
   * name.middleName, costCenter, …), as a JSON object keyed like the representation. Never a
   * password: that is hashed onto the person and never kept here.
   */
  @Column({ type: JSON_DOCUMENT })
  attributes: Record<string, unknown>;
}
